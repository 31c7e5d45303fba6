"""Claims a lab tests, as the trace contract declares them: words, section and rule in words.

Contract: a ``Claim`` names a claim (its key in the trace's ``CLAIM`` records), the words a page
shows, the page section that runs it and its rule in words; a claim whose rule cannot come out
but one way, given what the lab chose to run, says why in ``construction``: it is a
demonstration, shown apart from the claims a run tests. A rule changed after its verdict was
recorded keeps the earlier rule in ``changes`` (``RuleChange``: its words, the verdict it gave,
the last commit whose records it decided), which the lab shows as its verdict changelog: nothing
is re-tuned silently. The rule itself, as code, lives with the experiment that decides it
(registered with it, ``engine/experiments/registry.py``), which records each verdict once, with
the paths of the values it was decided from (``because``); the parser checks only that every
declared claim has exactly one verdict, one of ``VERDICTS``, whose values are values of the same
trace other than verdicts (``verdict_words``), and never decides a claim again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

VERDICTS = ("supports", "qualifies", "contradicts", "inconclusive")


@dataclass(frozen=True)
class RuleChange:
    """An earlier rule of a claim: its words, the verdict it gave, and the last commit whose
    records it decided."""

    rule: str
    verdict: str
    until: str


@dataclass(frozen=True)
class Claim:
    """One claim: its key in the trace, its words, the section that runs it, its rule in words,
    and, for a demonstration, why it holds by construction."""

    key: str
    words: str
    section: str
    rule: str
    construction: str = ""
    changes: tuple[RuleChange, ...] = ()


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's verdict and the paths of the values it was decided from (its CLAIM record)."""

    key: str
    verdict: str
    because: tuple[str, ...]


def verdict_words(claims: tuple[Claim, ...]) -> Callable[[Callable[[str], Any]], tuple[Any, Any]]:
    """The sides of the invariant "each declared claim's verdict is a verdict word, decided
    from values of this trace": a missing CLAIM record or a path that names nothing cannot be
    evaluated, a stray word or a path to a verdict differs from its side."""
    def sides(get: Callable[[str], Any]) -> tuple[Any, Any]:
        for claim in claims:  # the first claim whose record is wrong, alone
            told = (claim.key, get(f"CLAIM[{claim.key}].verdict"),
                    get(f"CLAIM[{claim.key}].because"))
            for path in told[2]:
                get(path)
            right = (claim.key, told[1] if told[1] in VERDICTS else " or ".join(VERDICTS),
                     tuple(p if not p.startswith("CLAIM") else "a value other than a verdict"
                           for p in told[2]))
            if told != right:
                return told, right
        return None, None
    return sides
