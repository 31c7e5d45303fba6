"""The residual-stream lab's claims and their rules (``tracefile.claims``), in page order.

The training rules read the grid: residual and plain pre-norm decoders at every depth and
learning rate, and post-norm decoders at the deepest depth with learning-rate and warm-up arms,
every arm over the same seeds. An architecture is judged at its own best learning rate (the arm
with the lowest median final validation loss). "Trains" means every seed ends below the
format-only loss, "fails" that none does. The analysis rules read the analyses of the trained
models, which were on the page before these rules were written down. Words and rules hold no
digits: pages show them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from tracefile.claims import Claim, Evidence, MissingArms, evidence_from_trace

Get = Callable[[str], Any]
#: A change of a loss smaller than this share of it does "little damage".
LITTLE = 0.01


def deep_plain_fails(get: Get) -> str:
    evidence = evidence_from_trace(get)
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


def depth_helps(get: Get) -> str:
    evidence = evidence_from_trace(get)
    best = [evidence.best("residual", "pre", d) for d in evidence.depths("residual", "pre")]
    steps = list(itertools.pairwise(best))
    better = [deeper.beats(shallower) for shallower, deeper in steps]
    worse = [shallower.beats(deeper) for shallower, deeper in steps]
    if better and all(better):
        return "supports"
    if not any(better):
        return "contradicts" if any(worse) else "inconclusive"
    return "qualifies"


def _postnorm(evidence: Evidence) -> tuple[int, float]:
    """The post-norm arms' depth and their highest learning rate."""
    post = [a for a in evidence.arms if a.norm == "post"]
    if not post:
        raise MissingArms("no post-norm arm")
    return max(a.depth for a in post), max(a.lr for a in post)


def postnorm_needs_warmup(get: Get) -> str:
    evidence = evidence_from_trace(get)
    depth, top = _postnorm(evidence)
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


def postnorm_tuned_better(get: Get) -> str:
    evidence = evidence_from_trace(get)
    depth, _ = _postnorm(evidence)
    post, pre = evidence.best("residual", "post", depth), evidence.best("residual", "pre", depth)
    if post.beats(pre):
        return "supports"
    if pre.beats(post):
        return "contradicts"
    return "inconclusive"


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


def early_exit_saves(get: Get) -> str:
    depth, full = get("EARLY-EXIT-CONFIG.depth"), get("EARLY-EXIT-CONFIG.full-loss")
    points = [(get(f"EARLY-EXIT[{t!r}].mean-blocks"), get(f"EARLY-EXIT[{t!r}].loss"))
              for t in get("EARLY-EXIT-CONFIG.thresholds")]
    cheap = [blocks for blocks, loss in points if loss < full * (1 + LITTLE)]
    if any(blocks <= 0.9 * depth for blocks in cheap):
        return "supports"
    return "qualifies" if any(blocks < depth for blocks in cheap) else "contradicts"


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


_TRAINING = (
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

_ANALYSES = (
    Claim("stream-is-sum", "The stream is the embedding plus every block's write", "sum",
          "Supports when adding the writes to the embedding in the forward's order gives the "
          "last state bit for bit; contradicts otherwise.", stream_is_sum),
    Claim("blocks-nudge", "Each block only nudges a stream that is already mostly right",
          "rewrite-then-edit",
          "A block nudges when its write is less than half the norm of the stream it joins. "
          "Supports when every block nudges, contradicts when none does, qualifies otherwise.",
          blocks_nudge),
    Claim("lens-improves", "Every intermediate state is a prediction that improves with depth",
          "logit-lens",
          "Each state of the residual model read out through the final norm and unembedding: "
          "supports when the loss falls at every block; qualifies when the last state's loss "
          "is below the embedding's but rises somewhere; contradicts otherwise.", lens_improves),
    Claim("early-exit-saves", "Stop a token once its stream stops changing, and save compute",
          "early-exit",
          "Supports when some threshold runs at most nine tenths of the blocks on average while "
          "the loss rises by less than one part in a hundred; qualifies when the thresholds that "
          "keep the loss within that save less; contradicts when none saves a block.",
          early_exit_saves),
    Claim("single-blocks-removable", "Single blocks can be removed with little damage",
          "lesions",
          "Deleting one block of the deepest residual model at a time, without retraining, "
          "does little damage when the loss rises by less than one part in a hundred. Supports "
          "when every deletion does little damage; qualifies when the median deletion does "
          "and some do not; contradicts when the median deletion does more.",
          single_blocks_removable),
    Claim("reordering-little-damage", "Reordering blocks does little damage", "reordering",
          "Swapping two neighbouring blocks of the deepest residual model, without retraining, "
          "does little damage when the loss rises by less than one part in a hundred. Supports "
          "when every swap does little damage; qualifies when the median swap does and some do "
          "not; contradicts when the median swap does more.", reordering_little_damage),
    Claim("angular-pruning", "Prune the blocks whose input and output are closest in angle",
          "pruning",
          "For every count of blocks strictly between none and all: supports when removing the "
          "consecutive run closest in angle ends lower than removing the last blocks at every "
          "count; contradicts when at none; qualifies otherwise.", angular_pruning),
    Claim("quantization-bounded", "Quantization errors stay bounded because of the residual path",
          "quantization",
          "Contradicts when the residual model's errors compound at either width; supports when "
          "they stay bounded while a plain model of the same depth that trained compounds; "
          "qualifies otherwise (bounded, but with no trained plain model to show that the "
          "residual path is the reason, or with one bounded too).", quantization_bounded),
    Claim("precision-loses-resolution", "In low precision the growing stream loses resolution",
          "precision",
          "Supports when, in both sixteen-bit formats, the share of an update lost in the add "
          "is larger at the last block than at the first; contradicts when smaller in both; "
          "qualifies otherwise.", precision_loses_resolution),
    Claim("add-is-cheap", "The add costs next to nothing in arithmetic", "flops",
          "Supports when the adds' share of a block's forward arithmetic is below one part in a "
          "hundred in both the lab's model and the realistic one; contradicts when above a "
          "tenth in either; qualifies otherwise.", add_is_cheap),
    Claim("add-moves-memory", "The add costs memory traffic rather than arithmetic", "flops",
          "Supports when, in one forward of the lab's model, the residual adds do less than a "
          "tenth of the matrix products' floating-point operations per byte moved; contradicts "
          "when at least half as many; qualifies otherwise.", add_moves_memory),
    Claim("stream-dominates-memory", "Activation memory is dominated by the residual tensors",
          "memory",
          "Supports when the stream's states hold more than half of what a training step keeps "
          "besides the parameters; contradicts when they hold less than a quarter; qualifies "
          "otherwise.", stream_dominates_memory),
    Claim("bad-shortcut-attenuates",
          "A badly initialized projection shortcut brings back attenuation", "projection",
          "Supports when the badly scaled shortcut keeps less than a tenth of the gradient ratio "
          "the random shortcut keeps (the same matrix without the factor); contradicts when it "
          "keeps as much; qualifies otherwise.", bad_shortcut_attenuates),
)

CLAIMS = (*_TRAINING, *_ANALYSES)
