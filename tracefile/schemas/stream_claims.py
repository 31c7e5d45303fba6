"""The residual-stream lab's training claims and their rules (``tracefile.claims``).

Each rule reads the training grid: residual and plain pre-norm decoders at every depth and
learning rate, and post-norm decoders at the deepest depth with learning-rate and warm-up
arms, every arm over the same seeds. An architecture is judged at its own best learning rate
(the arm with the lowest median final validation loss). "Trains" means every seed ends below
the format-only loss, "fails" that none does. The words hold no digits: they are shown on the
page.
"""

from __future__ import annotations

import itertools

from tracefile.claims import Claim, Evidence, MissingArms


def deep_plain_fails(evidence: Evidence) -> str:
    deep = [d for d in evidence.depths("plain", "pre") if d >= 4]
    if not deep:
        return "inconclusive"
    residual = {d: evidence.best("residual", "pre", d) for d in deep}
    plain = {d: evidence.best("plain", "pre", d) for d in deep}
    if any(plain[d].median <= residual[d].median for d in deep):
        return "contradicts"
    if not all(residual[d].beats(plain[d]) for d in deep):
        return "inconclusive"
    plain_never = all(evidence.fails(arm) for d in deep for arm in evidence.of("plain", "pre", d))
    if plain_never and all(evidence.trains(residual[d]) for d in deep):
        return "supports"
    return "qualifies"


def depth_helps(evidence: Evidence) -> str:
    depths = evidence.depths("residual", "pre")
    best = [evidence.best("residual", "pre", d) for d in depths]
    steps = list(itertools.pairwise(best))
    better = [deeper.beats(shallower) for shallower, deeper in steps]
    worse = [shallower.beats(deeper) for shallower, deeper in steps]
    if better and all(better):
        return "supports"
    if not any(better):
        return "contradicts" if any(worse) else "inconclusive"
    return "qualifies"


def _postnorm_arms(evidence: Evidence) -> tuple[int, float]:
    """The post-norm arms' depth and their highest learning rate."""
    post = [a for a in evidence.arms if a.norm == "post"]
    if not post:
        raise MissingArms("no post-norm arm")
    return max(a.depth for a in post), max(a.lr for a in post)


def postnorm_needs_warmup(evidence: Evidence) -> str:
    depth, top = _postnorm_arms(evidence)
    post = evidence.of("residual", "post", depth)
    bare = next((a for a in post if a.lr == top and a.warmup == 0), None)
    pre = next((a for a in evidence.of("residual", "pre", depth) if a.lr == top), None)
    if bare is None or pre is None:
        return "inconclusive"
    if evidence.trains(bare):
        return "contradicts"
    if not (evidence.fails(bare) and evidence.trains(pre)):
        return "inconclusive"
    warmed = [a for a in post if a.lr == top and a.warmup > 0]
    slower = [a for a in post if a.lr < top and a.warmup == 0]
    if warmed and all(evidence.trains(a) for a in warmed) and not any(
            evidence.trains(a) for a in slower):
        return "supports"
    return "qualifies"


def postnorm_tuned_better(evidence: Evidence) -> str:
    depth, _ = _postnorm_arms(evidence)
    post, pre = evidence.best("residual", "post", depth), evidence.best("residual", "pre", depth)
    if post.beats(pre):
        return "supports"
    if pre.beats(post):
        return "contradicts"
    return "inconclusive"


CLAIMS = (
    Claim("deep-plain-fails", "Without residual connections a deep, narrow model does not train",
          "trainability",
          "At every depth of four blocks or more, each architecture at its best learning rate: "
          "contradicts when the plain median is at or below the residual median at some depth; "
          "inconclusive when the residual model's worst seed does not beat the plain model's "
          "best seed at every depth; supports when, besides, no plain run at any learning rate "
          "gets below the format-only loss while the residual one trains; qualifies when some "
          "plain run does get below it (plain trains, only worse).", deep_plain_fails),
    Claim("depth-helps", "Depth is a cheap axis to spend on quality", "trainability",
          "Residual pre-norm decoders at each depth's best learning rate, in the same number "
          "of steps. A step up in depth is better when the deeper model's worst seed beats the "
          "shallower one's best seed, worse when the reverse holds. Supports when every step is "
          "better; contradicts when none is better and one is worse; inconclusive when none is "
          "either; qualifies otherwise.", depth_helps),
    Claim("postnorm-needs-warmup", "Post-norm is fragile without warm-up; pre-norm is not",
          "norm-placement",
          "At the deepest depth and the highest learning rate: contradicts when post-norm "
          "without warm-up trains; inconclusive unless it fails while pre-norm trains; supports "
          "when, besides, every warm-up arm at that rate trains and no lower rate without "
          "warm-up does; qualifies when a lower rate without warm-up also trains post-norm, or "
          "a warm-up arm does not (the rate, not the missing warm-up, is then what fails).",
          postnorm_needs_warmup),
    Claim("postnorm-tuned-better",
          "Post-norm, once tuned, reaches a slightly better final loss than pre-norm",
          "norm-placement",
          "Post-norm's best arm (learning rate and warm-up) against pre-norm's best learning "
          "rate at the deepest depth: supports when post-norm's worst seed beats pre-norm's "
          "best seed, contradicts when pre-norm's worst seed beats post-norm's best, "
          "inconclusive otherwise.", postnorm_tuned_better),
)
