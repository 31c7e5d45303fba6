"""Claims a lab tests, each with the rule that turns its measurements into a verdict.

Contract: a ``Claim`` is declared once, in the trace contract, with its words, the page section
that runs it, the rule in words, and the rule as a function of the trace's values (a path
resolver) returning one of ``VERDICTS``. The engine's results get their verdicts from the
rules applied to the trace they write (``tracefile.writer.decide_claims``), and parsing a
trace applies them again (each schema declares one invariant per claim), so a verdict that
does not follow from the numbers beside it never parses. A training claim's rule compares
spreads over seeds, never one run (``Evidence``): where spreads overlap it is
``inconclusive``, as is any claim whose grid lacks an arm it compares.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

VERDICTS = ("supports", "qualifies", "contradicts", "inconclusive")


@dataclass(frozen=True)
class ArmEvidence:
    """One arm of a training grid: an architecture at one setting, over several seeds."""

    arm: str
    variant: str
    norm: str
    depth: int
    lr: float
    warmup: int
    finals: tuple[float, ...]  # final validation loss of each seed

    @property
    def median(self) -> float:
        return statistics.median(self.finals)

    def beats(self, other: ArmEvidence) -> bool:
        """Every seed of this arm ends lower than every seed of ``other``."""
        return max(self.finals) < min(other.finals)


@dataclass(frozen=True)
class Evidence:
    """What the rules read: the grid's arms and the corpus's yardsticks."""

    arms: tuple[ArmEvidence, ...]
    unigram: float
    format_only: float

    def of(self, variant: str, norm: str, depth: int) -> list[ArmEvidence]:
        return [a for a in self.arms if (a.variant, a.norm, a.depth) == (variant, norm, depth)]

    def best(self, variant: str, norm: str, depth: int) -> ArmEvidence:
        """The architecture's arm with the lowest median (its best learning rate)."""
        arms = self.of(variant, norm, depth)
        if not arms:
            raise MissingArms(f"no {variant} {norm}-norm arm of depth {depth}")
        return min(arms, key=lambda a: (a.median, a.arm))

    def trains(self, arm: ArmEvidence) -> bool:
        """Every seed ends below the format-only loss: it learned some of the addition."""
        return max(arm.finals) < self.format_only

    def fails(self, arm: ArmEvidence) -> bool:
        """No seed ends below the format-only loss."""
        return min(arm.finals) >= self.format_only

    def depths(self, variant: str, norm: str) -> list[int]:
        return sorted({a.depth for a in self.arms if (a.variant, a.norm) == (variant, norm)})


class MissingArms(LookupError):
    """The grid lacks an arm a rule compares: the claim is then inconclusive."""


@dataclass(frozen=True)
class Claim:
    """One claim: its key in the trace, its words, the section that runs it and its rule."""

    key: str
    words: str
    section: str
    rule: str
    rule_function: Callable[[Callable[[str], Any]], str]

    def decide(self, get: Callable[[str], Any]) -> str:
        """The verdict from the values ``get`` resolves; ``inconclusive`` when the grid lacks
        what the rule compares."""
        try:
            return self.rule_function(get)
        except MissingArms:
            return "inconclusive"


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's verdict, as the trace's CLAIM record holds it."""

    key: str
    verdict: str


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def evidence_from_trace(get: Callable[[str], Any]) -> Evidence:
    """The training grid as a trace holds it (``ARM`` records named by
    ``TRAINING-CONFIG.arm-names``, the ``CORPUS`` yardsticks)."""
    arms = get("TRAINING-CONFIG.arm-names")
    found = tuple(ArmEvidence(name, get(f"ARM[{name}].variant"), get(f"ARM[{name}].norm"),
                              get(f"ARM[{name}].depth"), get(f"ARM[{name}].lr"),
                              get(f"ARM[{name}].warmup"), get(f"ARM[{name}].final-validation"))
                  for name in arms)
    return Evidence(found, get("CORPUS.unigram"), get("CORPUS.format-only"))
