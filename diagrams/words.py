"""Whole numbers in English words, for the few places a page names a position rather than a
traced value ("block twelve" in a chart's table of values): pages show no digit that is not
traced, and a position is not a measurement.

Contract: ``number_words(n)`` spells ``0 <= n < 1_000_000`` ("zero", "twelve", "sixty-four",
"one hundred and five", "ten thousand", "two thousand and five"); anything else is a
ValueError. ``verdict_term(word)`` and ``claim_rule(claim)`` render a verdict word where a page
defines it and a claim's declared rule: the only ways a page shows a verdict word that is not
a traced value (the audit accepts exactly these renderings), and ``claim_changes(claim)``
each earlier rule of a claim with the verdict it gave and the commit it lasted until (the
lab's verdict changelog). ``trace_rules()`` are the trace reader's rules with their limits
in words.
"""

from __future__ import annotations

from markupsafe import Markup

from tracefile.claims import VERDICTS, Claim
from tracefile.rules import LIMITS, RULES
from tracefile.values import is_int

ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_words(n: int) -> str:
    """``n`` in words (British "and" after the hundreds)."""
    if not is_int(n) or not 0 <= n < 1_000_000:
        raise ValueError(f"number_words spells whole numbers from zero to 999999, not {n!r}")
    if n >= 1000:
        thousands, rest = divmod(n, 1000)
        text = f"{number_words(thousands)} thousand"
        if rest:
            text += (" and " if rest < 100 else " ") + number_words(rest)
        return text
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + (f"-{ONES[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    return f"{ONES[hundreds]} hundred" + (f" and {number_words(rest)}" if rest else "")


def verdict_term(word: str) -> Markup:
    """A verdict word where the page defines the vocabulary, not where it gives a verdict."""
    if word not in VERDICTS:
        raise ValueError(f"verdict_term: {word!r} is not one of {', '.join(VERDICTS)}")
    return Markup('<dfn class="verdict-term">{}</dfn>').format(word)


def claim_rule(claim: Claim) -> Markup:
    """A claim's rule as declared in the trace contract."""
    return Markup('<span class="claim-rule" data-claim="{}">{}</span>').format(claim.key,
                                                                              claim.rule)


def claim_changes(claim: Claim) -> list[Markup]:
    """Each earlier rule of ``claim``, as the lab's verdict changelog shows it."""
    return [Markup('<span class="claim-change" data-claim="{}">Until commit <code>{}</code> '
                   "the rule was: {} It gave <em>{}</em>.</span>").format(
                       claim.key, change.until, change.rule, change.verdict)
            for change in claim.changes]


def trace_rules() -> list[str]:
    """The reader's rules (``tracefile.rules``), their limits spelled out in words."""
    texts = []
    for rule in RULES:
        text = rule.text
        for name, value in LIMITS.items():
            text = text.replace(name, number_words(value))
        texts.append(text)
    return texts
