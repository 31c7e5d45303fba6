"""The gradients lab's rules: each claim the trace declares (tracefile/schemas/gradient_claims.py),
decided from the values its results write (``engine.experiments.claims``).

Most rules read the trainability grid: plain and residual stacks, each with each
initialization of its output projections, at every depth and learning rate, every arm over
the same seeds; the others read the identity fit and the clipping runs, summarised the same
way. An architecture (variant, initialization, depth) is judged at its own best
learning rate, the arm with the lowest median final loss; one beats another when each of its
seeds ends lower than every seed of the other.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from typing import Any

from engine.experiments.claims import Decided, MissingArms
from engine.init import OUTPUT_STARTS as INITS

Get = Callable[[str], Any]


#: An architecture's final losses at its best learning rate, and their path in the trace.
Finals = tuple[str, tuple[float, ...]]


def _finals(get: Get) -> dict[tuple[str, str, int], Finals]:
    """Each architecture's final losses at its best learning rate, by (variant, init, depth)."""
    best: dict[tuple[str, str, int], tuple[float, str, Finals]] = {}
    for name in get("TRAINING-CONFIG.arm-names"):
        arm = f"ARM[{name}]"
        key = (get(f"{arm}.variant"), get(f"{arm}.init"), get(f"{arm}.depth"))
        finals = get(f"{arm}.final-loss")
        median = statistics.median(finals)
        if key not in best or (median, name) < best[key][:2]:
            best[key] = (median, name, (f"{arm}.final-loss", finals))
    return {key: value[2] for key, value in best.items()}


def _beats(one: Finals, other: Finals) -> bool:
    return max(one[1]) < min(other[1])


def _compare(one: Finals | None, other: Finals | None) -> Decided:
    if one is None or other is None:
        raise MissingArms("an architecture the rule compares is not in the grid")
    verdict = "supports" if _beats(one, other) else "contradicts" if _beats(other, one) else (
        "inconclusive")
    return Decided(verdict, (one[0], other[0]))


def plain_degrades(get: Get) -> Decided:
    plain = [finals for _, finals in sorted(
        (key[2], finals) for key, finals in _finals(get).items()
        if key[:2] == ("plain", "default"))]
    steps = list(itertools.pairwise(plain))
    if not steps:
        raise MissingArms("no plain stacks of several depths")
    worse = [(shallow, deep) for shallow, deep in steps if _beats(shallow, deep)]
    if worse:
        return Decided("supports", tuple(finals[0] for finals in worse[0]))
    better = all(_beats(deep, shallow) for shallow, deep in steps)
    return Decided("contradicts" if better else "inconclusive",
                   tuple(finals[0] for finals in plain))


def _deepest(finals: dict[tuple[str, str, int], Finals]) -> int:
    if not finals:
        raise MissingArms("no arm")
    return max(key[2] for key in finals)


def _best_start(finals: dict[tuple[str, str, int], Finals], variant: str, depth: int,
                starts: tuple[str, ...]) -> Finals | None:
    """The variant's finals at ``depth`` with the start of ``starts`` whose median is lowest."""
    found = [finals[key] for key in ((variant, start, depth) for start in starts) if key in finals]
    return min(found, key=lambda one: statistics.median(one[1])) if found else None


def residual_trains_deeper(get: Get) -> Decided:
    finals = _finals(get)
    depth = _deepest(finals)
    return _compare(finals.get(("residual", "scaled", depth)),
                    _best_start(finals, "plain", depth, INITS))


def identity_start_helps(get: Get) -> Decided:
    finals = _finals(get)
    depth = _deepest(finals)
    return _compare(finals.get(("residual", "zero", depth)),
                    _best_start(finals, "residual", depth, ("default", "scaled")))


def identity_hard_for_plain(get: Get) -> str:
    best = {model: f"IDENTITY-BEST[{model}]" for model in get("IDENTITY-CONFIG.models")}
    if not {"plain-default", "residual-default", "residual-zero"} <= set(best):
        raise MissingArms("the identity fit needs the plain block and both residual blocks")
    plain, residual = best["plain-default"], best["residual-default"]
    if get(f"{plain}.median") <= get(f"{residual}.median"):
        return "contradicts"
    starts_there = get(f"{best['residual-zero']}.high") == 0.0
    beats = get(f"{residual}.high") < get(f"{plain}.low")
    return "supports" if starts_there and beats else "inconclusive"


def clipping_tames_explosion(get: Get) -> Decided:
    best: dict[tuple[str, int], str] = {}
    for stack in get("CLIP-CONFIG.stacks"):
        record = f"CLIP-BEST[{stack}]"
        best[(get(f"{record}.model"), get(f"{record}.depth"))] = record
    depths = sorted({depth for _, depth in best})
    models = ("residual-default", "residual-default-clipped", "residual-zero")
    if not depths or any((model, d) not in best for d in depths for model in models):
        raise MissingArms("the clipping runs need all three models at every depth")
    zero = get("CLIP-CONFIG.zero-loss")
    because = ("CLIP-CONFIG.zero-loss", *(
        f"{best[(model, d)]}.{field}" for d in depths for model in models
        for field in ("low", "high", "diverged")))

    def trained(model: str, depth: int) -> bool:
        record = best[(model, depth)]
        return get(f"{record}.diverged") == 0 and get(f"{record}.high") < zero

    def beats(model: str, other: str, depth: int) -> bool:  # every seed below every seed
        return get(f"{best[(model, depth)]}.high") < get(f"{best[(other, depth)]}.low")

    clipped, unclipped = "residual-default-clipped", "residual-default"
    if not all(trained("residual-zero", d) for d in depths):
        verdict = "inconclusive"  # the control does not train: the task, not the stack, fails
    elif (any(get(f"{best[(clipped, d)]}.diverged") for d in depths)
          or all(beats(unclipped, clipped, d) for d in depths)):
        verdict = "contradicts"
    elif all(trained(clipped, d) and beats(clipped, unclipped, d) for d in depths):
        verdict = "supports"
    else:
        verdict = "qualifies"
    return Decided(verdict, because)


RULES = {
    "plain-degrades": plain_degrades,
    "residual-trains-deeper": residual_trains_deeper,
    "identity-start-helps": identity_start_helps,
    "identity-hard-for-plain": identity_hard_for_plain,
    "clipping-tames-explosion": clipping_tames_explosion,
}
