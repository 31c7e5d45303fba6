"""Claims a lab tests, as the trace contract declares them: words, section and rule in words.

Contract: a ``Claim`` names a claim (its key in the trace's ``CLAIM`` records), the words a page
shows, the page section that runs it and its rule in words. The rule itself, as code, lives with
the experiment that decides it (``engine/experiments/*/claims.py``), which records each verdict
once; the parser checks only that every declared claim has exactly one verdict, one of
``VERDICTS`` (``verdict_words``), and never decides a claim again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

VERDICTS = ("supports", "qualifies", "contradicts", "inconclusive")


@dataclass(frozen=True)
class Claim:
    """One claim: its key in the trace, its words, the section that runs it, its rule in words."""

    key: str
    words: str
    section: str
    rule: str


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's verdict, as the trace's CLAIM record holds it."""

    key: str
    verdict: str


def verdict_words(claims: tuple[Claim, ...]) -> Callable[[Callable[[str], Any]], tuple[Any, Any]]:
    """The sides of the invariant "each declared claim's verdict is a verdict word": a missing
    CLAIM record cannot be evaluated, a stray word differs from its side."""
    def sides(get: Callable[[str], Any]) -> tuple[Any, Any]:
        told = [(c.key, get(f"CLAIM[{c.key}].verdict")) for c in claims]
        return told, [(key, verdict if verdict in VERDICTS else " or ".join(VERDICTS))
                      for key, verdict in told]
    return sides
