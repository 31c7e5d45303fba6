"""The residual-stream lab's rules: each claim the trace declares (tracefile/schemas/
stream_claims.py), decided from the values its results write (``engine.experiments.claims``).

The training rules read the grid: residual and plain pre-norm decoders at every depth and
learning rate, and post-norm decoders at every depth with learning-rate and warm-up arms,
every arm over the same seeds. An architecture is judged at its own best learning rate (the arm
with the lowest median final validation loss). "Trains" means every seed ends below the
format-only loss, "fails" that none does. The analysis rules read the analyses of the trained
models, which were on the page before these rules were written down. Words and rules hold no
digits: pages show them.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.experiments.claims import Decided, MissingArms

Get = Callable[[str], Any]
#: A change of a loss smaller than this share of it does "little damage".
LITTLE = 0.01


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

    def beats(self, other: ArmEvidence) -> bool:
        """Every seed of this arm ends lower than every seed of ``other``."""
        return max(self.finals) < min(other.finals)


@dataclass(frozen=True)
class Evidence:
    """What the rules read: the grid's arms and the corpus's format-only loss."""

    arms: tuple[ArmEvidence, ...]
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



def evidence_from_trace(get: Callable[[str], Any]) -> Evidence:
    """The training grid as a trace holds it (``ARM`` records named by
    ``TRAINING-CONFIG.arm-names``, the ``CORPUS`` yardsticks)."""
    arms = get("TRAINING-CONFIG.arm-names")
    found = tuple(ArmEvidence(name, get(f"ARM[{name}].variant"), get(f"ARM[{name}].norm"),
                              get(f"ARM[{name}].depth"), get(f"ARM[{name}].lr"),
                              get(f"ARM[{name}].warmup"), get(f"ARM[{name}].final-validation"))
                  for name in arms)
    return Evidence(found, get("CORPUS.format-only"))


def _because(*arms: ArmEvidence | None, format_only: bool = False) -> tuple[str, ...]:
    """The paths of ``arms``' final losses (and the format-only loss, if it decided)."""
    return (*(["CORPUS.format-only"] if format_only else []),
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
    if not all(residual[d].beats(plain[d]) for d in deep):
        return Decided("inconclusive", because)
    plain_never = all(evidence.fails(arm) for d in deep for arm in evidence.of("plain", "pre", d))
    if plain_never and all(evidence.trains(residual[d]) for d in deep):
        return Decided("supports", because)
    return Decided("qualifies", because)


def depth_helps(get: Get) -> Decided:
    evidence = evidence_from_trace(get)
    best = [evidence.best("residual", "pre", d) for d in evidence.depths("residual", "pre")]
    steps = list(itertools.pairwise(best))
    better = [deeper.beats(shallower) for shallower, deeper in steps]
    worse = [shallower.beats(deeper) for shallower, deeper in steps]
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
    trained = [sum(final < evidence.format_only for final in arm.finals) for arm in post]
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
    verdict = ("supports" if post.beats(pre) else "contradicts" if pre.beats(post)
               else "inconclusive")
    return Decided(verdict, _because(post, pre))


def stream_is_sum(get: Get) -> str:
    return "supports" if get("STREAM.exact-in-order") else "contradicts"


def blocks_nudge(get: Get) -> str:
    nudges = [share < 0.5 for share in get("STREAM.write-over-stream")]
    return "supports" if all(nudges) else "contradicts" if not any(nudges) else "qualifies"


def lens_improves(get: Get) -> str:
    losses = get("LENS.residual")
    if all(later < earlier for earlier, later in itertools.pairwise(losses)):
        return "supports"
    return "qualifies" if losses[-1] < losses[0] else "contradicts"


def early_exit_saves(get: Get) -> Decided:
    depth, full = get("EARLY-EXIT-CONFIG.depth"), get("EARLY-EXIT-CONFIG.full-loss")
    points = [(get(f"EARLY-EXIT[{t!r}].mean-blocks"), get(f"EARLY-EXIT[{t!r}].loss"),
               f"EARLY-EXIT[{t!r}]") for t in get("EARLY-EXIT-CONFIG.thresholds")]
    cheap = [point for point in points if point[1] < full * (1 + LITTLE)]
    # The cheapest exit that kept the loss, else the one that lost the least.
    blocks, _, record = min(cheap) if cheap else min(points, key=lambda point: point[1])
    because = ("EARLY-EXIT-CONFIG.depth", "EARLY-EXIT-CONFIG.full-loss",
               f"{record}.mean-blocks", f"{record}.loss")
    if cheap and blocks <= 0.9 * depth:
        return Decided("supports", because)
    return Decided("qualifies" if cheap and blocks < depth else "contradicts", because)


def single_blocks_removable(get: Get) -> str:
    lesion = "LESION[residual-prenorm-eight]"
    intact, losses = get(f"{lesion}.intact"), get(f"{lesion}.loss")
    if all(loss < intact * (1 + LITTLE) for loss in losses):
        return "supports"
    return "qualifies" if get(f"{lesion}.median-increase") < intact * LITTLE else "contradicts"


def reordering_little_damage(get: Get) -> str:
    intact = get("REORDER.intact")
    if get("REORDER.worst-increase") < intact * LITTLE:
        return "supports"
    return "qualifies" if get("REORDER.median-increase") < intact * LITTLE else "contradicts"


def angular_pruning(get: Get) -> str:
    beats, counts = get("PRUNING.angular-beats-last"), get("PRUNING.depth") - 1
    return "supports" if beats == counts else "contradicts" if beats == 0 else "qualifies"


def quantization_bounded(get: Get) -> str:
    cases = ("eight-bit", "four-bit")
    if any(get(f"QUANTIZATION[residual-{c}].behaviour") != "bounded" for c in cases):
        return "contradicts"
    plain_trained = get("TRAINING[plain-prenorm-eight].final-validation") < get(
        "CORPUS.format-only")
    plain_compounds = any(get(f"QUANTIZATION[plain-{c}].behaviour") != "bounded" for c in cases)
    return "supports" if plain_trained and plain_compounds else "qualifies"


def precision_loses_resolution(get: Get) -> str:
    grows = [lost[-1] > lost[0] for lost in (get(f"FORMAT[{f}].update-lost")
                                             for f in ("fp-sixteen", "bf-sixteen"))]
    return "supports" if all(grows) else "contradicts" if not any(grows) else "qualifies"


def add_is_cheap(get: Get) -> str:
    shares = [get(f"FLOPS[{setting}].add-share") for setting in ("lab", "realistic")]
    if all(share < 0.01 for share in shares):
        return "supports"
    return "contradicts" if any(share > 0.1 for share in shares) else "qualifies"


def add_moves_memory(get: Get) -> str:
    ratio = get("INTENSITY.ratio")
    return "supports" if ratio < 0.1 else "contradicts" if ratio >= 0.5 else "qualifies"


def stream_dominates_memory(get: Get) -> str:
    share = get("MEMORY.activation-stream-share")
    return "supports" if share > 0.5 else "contradicts" if share < 0.25 else "qualifies"


def bad_shortcut_attenuates(get: Get) -> str:
    bad, random = get("SHORTCUT[badly-scaled].ratio"), get("SHORTCUT[random].ratio")
    return "supports" if bad < 0.1 * random else "contradicts" if bad >= random else "qualifies"


RULES = {
    "deep-plain-fails": deep_plain_fails,
    "depth-helps": depth_helps,
    "postnorm-needs-warmup": postnorm_needs_warmup,
    "postnorm-fragile-deep": postnorm_fragile_deep,
    "postnorm-tuned-better": postnorm_tuned_better,
    "stream-is-sum": stream_is_sum,
    "blocks-nudge": blocks_nudge,
    "lens-improves": lens_improves,
    "early-exit-saves": early_exit_saves,
    "single-blocks-removable": single_blocks_removable,
    "reordering-little-damage": reordering_little_damage,
    "angular-pruning": angular_pruning,
    "quantization-bounded": quantization_bounded,
    "precision-loses-resolution": precision_loses_resolution,
    "add-is-cheap": add_is_cheap,
    "add-moves-memory": add_moves_memory,
    "stream-dominates-memory": stream_dominates_memory,
    "bad-shortcut-attenuates": bad_shortcut_attenuates,
}
