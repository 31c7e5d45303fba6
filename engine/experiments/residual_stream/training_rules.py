"""The rules of the claims the training grid decides (registered with it, engine/experiments/
residual_stream/training.py), and the grid as they read it from the trace.

An architecture is judged at its own best learning rate (the arm with the lowest median final
validation loss). Every comparison carries the grid's declared margin (``TRAINING-CONFIG.margin``,
in nats, larger than the most a final loss moved between CPU kernels): "trains" means every
seed ends more than the margin below the format-only loss, "fails" that no seed does, and one
arm beats another when its worst seed ends more than the margin below the other's best. A
loss moved by less than the margin cannot change a verdict. Words and rules hold no digits:
pages show them.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

from engine.experiments.claims import Decided, Get, MissingArms


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
    def path(self) -> str:
        """Where the trace holds its final losses."""
        return f"ARM[{self.arm}].final-validation"

    @property
    def median(self) -> float:
        return statistics.median(self.finals)


@dataclass(frozen=True)
class Evidence:
    """What the rules read: the grid's arms, the corpus's format-only loss and the margin."""

    arms: tuple[ArmEvidence, ...]
    format_only: float
    margin: float

    def of(self, variant: str, norm: str, depth: int) -> list[ArmEvidence]:
        return [a for a in self.arms if (a.variant, a.norm, a.depth) == (variant, norm, depth)]

    def best(self, variant: str, norm: str, depth: int) -> ArmEvidence:
        """The architecture's arm with the lowest median (its best learning rate)."""
        arms = self.of(variant, norm, depth)
        if not arms:
            raise MissingArms(f"no {variant} {norm}-norm arm of depth {depth}")
        return min(arms, key=lambda a: (a.median, a.arm))

    def learned(self, final: float) -> bool:
        """A final loss more than the margin below the format-only loss: some of the addition."""
        return final < self.format_only - self.margin

    def trains(self, arm: ArmEvidence) -> bool:
        """Every seed learned some of the addition (see `learned`)."""
        return all(self.learned(final) for final in arm.finals)

    def fails(self, arm: ArmEvidence) -> bool:
        """No seed did."""
        return not any(self.learned(final) for final in arm.finals)

    def beats(self, one: ArmEvidence, other: ArmEvidence) -> bool:
        """Every seed of ``one`` ends more than the margin below every seed of ``other``."""
        return max(one.finals) + self.margin < min(other.finals)

    def depths(self, variant: str, norm: str) -> list[int]:
        return sorted({a.depth for a in self.arms if (a.variant, a.norm) == (variant, norm)})



def evidence_from_trace(get: Get) -> Evidence:
    """The training grid as a trace holds it (``ARM`` records named by
    ``TRAINING-CONFIG.arm-names``, the ``CORPUS`` yardsticks)."""
    arms = get("TRAINING-CONFIG.arm-names")
    found = tuple(ArmEvidence(name, get(f"ARM[{name}].variant"), get(f"ARM[{name}].norm"),
                              get(f"ARM[{name}].depth"), get(f"ARM[{name}].lr"),
                              get(f"ARM[{name}].warmup"), get(f"ARM[{name}].final-validation"))
                  for name in arms)
    return Evidence(found, get("CORPUS.format-only"), get("TRAINING-CONFIG.margin"))


def _because(*arms: ArmEvidence | None, format_only: bool = False) -> tuple[str, ...]:
    """The paths of ``arms``' final losses and the margin (and the format-only loss, if it
    decided)."""
    return (*(["CORPUS.format-only"] if format_only else []), "TRAINING-CONFIG.margin",
            *dict.fromkeys(arm.path for arm in arms if arm is not None))


def deep_plain_fails(get: Get) -> Decided:
    evidence = evidence_from_trace(get)
    deep = [d for d in evidence.depths("plain", "pre") if d >= 4]
    if not deep:
        raise MissingArms("no plain decoder of four blocks or more")
    residual = {d: evidence.best("residual", "pre", d) for d in deep}
    plain = {d: evidence.best("plain", "pre", d) for d in deep}
    because = _because(*(arm for d in deep for arm in (residual[d], plain[d])),
                       format_only=True)
    if any(plain[d].median <= residual[d].median for d in deep):
        return Decided("contradicts", because)
    if not all(evidence.beats(residual[d], plain[d]) for d in deep):
        return Decided("inconclusive", because)
    plain_never = all(evidence.fails(arm) for d in deep for arm in evidence.of("plain", "pre", d))
    if plain_never and all(evidence.trains(residual[d]) for d in deep):
        return Decided("supports", because)
    return Decided("qualifies", because)


def depth_helps(get: Get) -> Decided:
    evidence = evidence_from_trace(get)
    best = [evidence.best("residual", "pre", d) for d in evidence.depths("residual", "pre")]
    steps = list(itertools.pairwise(best))
    better = [evidence.beats(deeper, shallower) for shallower, deeper in steps]
    worse = [evidence.beats(shallower, deeper) for shallower, deeper in steps]
    if better and all(better):
        verdict = "supports"
    elif not any(better):
        verdict = "contradicts" if any(worse) else "inconclusive"
    else:
        verdict = "qualifies"
    return Decided(verdict, _because(*best))


def _postnorm(evidence: Evidence) -> tuple[int, float]:
    """The post-norm arms' depth and their highest learning rate."""
    post = [a for a in evidence.arms if a.norm == "post"]
    if not post:
        raise MissingArms("no post-norm arm")
    return max(a.depth for a in post), max(a.lr for a in post)


def postnorm_needs_warmup(get: Get) -> Decided:
    evidence = evidence_from_trace(get)
    depth, top = _postnorm(evidence)
    post = evidence.of("residual", "post", depth)
    bare = next((a for a in post if a.lr == top and a.warmup == 0), None)
    pre = next((a for a in evidence.of("residual", "pre", depth) if a.lr == top), None)
    if bare is None or pre is None:
        raise MissingArms("no post-norm arm without warm-up, or no pre-norm arm, at its rate")
    warmed = [a for a in post if a.lr == top and a.warmup > 0]
    slower = [a for a in post if a.lr < top and a.warmup == 0]
    because = _because(bare, pre, *warmed, *slower, format_only=True)
    if evidence.trains(bare):
        return Decided("contradicts", because)
    if not (evidence.fails(bare) and evidence.trains(pre)):
        return Decided("inconclusive", because)
    if warmed and all(evidence.trains(a) for a in warmed) and not any(
            evidence.trains(a) for a in slower):
        return Decided("supports", because)
    return Decided("qualifies", because)


def postnorm_fragile_deep(get: Get) -> Decided:
    evidence = evidence_from_trace(get)
    _, top = _postnorm(evidence)
    depths = evidence.depths("residual", "post")

    def bare(norm: str, depth: int) -> ArmEvidence:  # the top rate, no warm-up
        found = [a for a in evidence.of("residual", norm, depth) if a.lr == top and not a.warmup]
        if not found:
            raise MissingArms(f"no {norm}-norm arm of depth {depth} at the top rate")
        return found[0]

    if len(depths) < 2:
        raise MissingArms("post-norm at one depth only")
    post, pre = [bare("post", d) for d in depths], [bare("pre", d) for d in depths]
    because = _because(*post, *pre, format_only=True)
    trained = [sum(evidence.learned(final) for final in arm.finals) for arm in post]
    if not all(evidence.trains(arm) for arm in pre):
        return Decided("inconclusive", because)  # the control fails: the rate, not the norm
    if trained[-1] >= trained[0]:
        return Decided("contradicts", because)
    if evidence.trains(post[0]) and evidence.fails(post[-1]):
        return Decided("supports", because)
    return Decided("qualifies", because)


def postnorm_tuned_better(get: Get) -> Decided:
    evidence = evidence_from_trace(get)
    depth, _ = _postnorm(evidence)
    post, pre = evidence.best("residual", "post", depth), evidence.best("residual", "pre", depth)
    verdict = ("supports" if evidence.beats(post, pre) else "contradicts"
               if evidence.beats(pre, post) else "inconclusive")
    return Decided(verdict, _because(post, pre))
