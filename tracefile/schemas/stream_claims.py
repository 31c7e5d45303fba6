"""The residual-stream lab's claims as the trace declares them (``tracefile.claims``), in
page order: words, section and rule in words. The rules as code, which decide the verdicts, are
registered with their experiments (engine/experiments/residual_stream/). Words and rules hold
no digits: pages show them.
"""

from __future__ import annotations

from tracefile.claims import Claim, RuleChange

_TRAINING = (
    Claim("deep-plain-fails", "Without residual connections a deep, narrow model does not train",
          "trainability",
          "At every depth of four blocks or more, each architecture at its best learning rate, "
          "with the margin: contradicts when the plain median is at or below the residual "
          "median at some depth; inconclusive unless at every depth the residual model's worst "
          "seed ends more than the margin below the plain model's best seed; supports when, "
          "besides, no plain run at any learning rate ends more than the margin below the "
          "format-only loss while every residual seed does; qualifies when some plain run does "
          "(plain trains, only worse).",
          changes=(RuleChange(
              "At every depth of four blocks or more, each architecture at its best learning "
              "rate: contradicts when the plain median is at or below the residual median at "
              "some depth; inconclusive when the residual model's worst seed does not beat the "
              "plain model's best seed at every depth; supports when, besides, no plain run at "
              "any learning rate gets below the format-only loss while the residual one trains; "
              "qualifies when some plain run does get below it (plain trains, only worse). It "
              "had no margin: a final loss moved by a CPU kernel's rounding, or by a seed a "
              "hair either side of the yardstick, could change its verdict.",
              "supports", "32427f2"),)),
    Claim("depth-helps", "Depth is a cheap axis to spend on quality",
          "trainability",
          "Residual pre-norm decoders at each depth's best learning rate, in the same number of "
          "steps. A step up in depth is better when the deeper model's worst seed ends more "
          "than the margin below the shallower one's best seed, worse when the reverse holds. "
          "Supports when every step is better; contradicts when none is better and one is "
          "worse; inconclusive when none is either; qualifies otherwise.",
          changes=(RuleChange(
              "Residual pre-norm decoders at each depth's best learning rate, in the same "
              "number of steps. A step up in depth is better when the deeper model's worst seed "
              "beats the shallower one's best seed, worse when the reverse holds. Supports when "
              "every step is better; contradicts when none is better and one is worse; "
              "inconclusive when none is either; qualifies otherwise. It had no margin: a final "
              "loss moved by a CPU kernel's rounding, or by a seed a hair either side of the "
              "yardstick, could change its verdict.",
              "inconclusive", "32427f2"),)),
    Claim("postnorm-needs-warmup", "Post-norm is fragile without warm-up; pre-norm is not",
          "norm-placement",
          "At the deepest depth and the highest learning rate, an arm training when every seed "
          "ends more than the margin below the format-only loss and failing when no seed does: "
          "contradicts when post-norm without warm-up trains; inconclusive unless it fails "
          "while pre-norm trains; supports when, besides, every warm-up arm at that rate trains "
          "and no lower rate without warm-up does; qualifies when a lower rate without warm-up "
          "also trains post-norm, or a warm-up arm does not (the rate, not the missing warm-up, "
          "is then what fails).",
          changes=(RuleChange(
              "At the deepest depth and the highest learning rate: contradicts when post-norm "
              "without warm-up trains; inconclusive unless it fails while pre-norm trains; "
              "supports when, besides, every warm-up arm at that rate trains and no lower rate "
              "without warm-up does; qualifies when a lower rate without warm-up also trains "
              "post-norm, or a warm-up arm does not (the rate, not the missing warm-up, is then "
              "what fails). It had no margin: a final loss moved by a CPU kernel's rounding, or "
              "by a seed a hair either side of the yardstick, could change its verdict.",
              "qualifies", "32427f2"),)),
    Claim("postnorm-fragile-deep", "Post-norm is fragile to train deep",
          "norm-placement",
          "Residual post-norm and pre-norm decoders at every depth, at the highest learning "
          "rate and without warm-up, counting the seeds that end more than the margin below the "
          "format-only loss: inconclusive unless pre-norm trains in every seed at every depth; "
          "contradicts when at least as many post-norm seeds train at the deepest depth as at "
          "the shallowest; supports when every post-norm seed trains at the shallowest depth "
          "and none at the deepest; qualifies when fewer train deep but not all against none.",
          changes=(RuleChange(
              "Residual post-norm and pre-norm decoders at every depth, at the highest learning "
              "rate and without warm-up, counting the seeds that end below the format-only "
              "loss: inconclusive unless pre-norm trains in every seed at every depth; "
              "contradicts when at least as many post-norm seeds train at the deepest depth as "
              "at the shallowest; supports when every post-norm seed trains at the shallowest "
              "depth and none at the deepest; qualifies when fewer train deep but not all "
              "against none. It had no margin: a final loss moved by a CPU kernel's rounding, "
              "or by a seed a hair either side of the yardstick, could change its verdict.",
              "supports", "32427f2"),)),
    Claim("postnorm-tuned-better",
          "Post-norm, once tuned, reaches a slightly better final loss than pre-norm",
          "norm-placement",
          "Post-norm's best arm (learning rate and warm-up) against pre-norm's best learning "
          "rate at the deepest depth: supports when post-norm's worst seed ends more than the "
          "margin below pre-norm's best seed, contradicts when pre-norm's worst seed ends more "
          "than the margin below post-norm's best, inconclusive otherwise.",
          changes=(RuleChange(
              "Post-norm's best arm (learning rate and warm-up) against pre-norm's best "
              "learning rate at the deepest depth: supports when post-norm's worst seed beats "
              "pre-norm's best seed, contradicts when pre-norm's worst seed beats post-norm's "
              "best, inconclusive otherwise. It had no margin: a final loss moved by a CPU "
              "kernel's rounding, or by a seed a hair either side of the yardstick, could "
              "change its verdict.",
              "inconclusive", "32427f2"),)),
)

_ANALYSES = (
    Claim("stream-is-sum", "The stream is the embedding plus every block's write", "sum",
          "Supports when adding the writes to the embedding in the forward's order gives the "
          "last state bit for bit; contradicts otherwise.",
          construction="An identity of the architecture: the sum repeats the forward's own "
          "additions in the forward's order, so only a fault in the engine could break it."),
    Claim("blocks-nudge", "Each block only nudges a stream that is already mostly right",
          "rewrite-then-edit",
          "A block nudges when its write is less than half the norm of the stream it joins. "
          "Supports when every block nudges, contradicts when none does, qualifies otherwise."),
    Claim("lens-improves", "Every intermediate state is a prediction that improves with depth",
          "logit-lens",
          "Each state of the residual model read out through the final norm and unembedding: "
          "supports when the loss falls at every block; qualifies when the last state's loss "
          "is below the embedding's but rises somewhere; contradicts otherwise."),
    Claim("early-exit-saves", "Stop a token once its stream stops changing, and save compute",
          "early-exit",
          "Supports when some threshold runs at most nine tenths of the blocks on average while "
          "the loss rises by less than one part in a hundred; qualifies when the thresholds that "
          "keep the loss within that save less; contradicts when none saves a block."),
    Claim("single-blocks-removable", "Single blocks can be removed with little damage",
          "lesions",
          "Deleting one block of the deepest residual model at a time, without retraining, "
          "does little damage when the loss rises by less than one part in a hundred. Supports "
          "when every deletion does little damage; qualifies when the median deletion does "
          "and some do not; contradicts when the median deletion does more."),
    Claim("reordering-little-damage", "Reordering blocks does little damage", "reordering",
          "Swapping two neighbouring blocks of the deepest residual model, without retraining, "
          "does little damage when the loss rises by less than one part in a hundred. Supports "
          "when every swap does little damage; qualifies when the median swap does and some do "
          "not; contradicts when the median swap does more."),
    Claim("angular-pruning", "Prune the blocks whose input and output are closest in angle",
          "pruning",
          "For every count of blocks strictly between none and all: supports when removing the "
          "consecutive run closest in angle ends lower than removing the last blocks at every "
          "count; contradicts when at none; qualifies otherwise."),
    Claim("quantization-bounded", "Quantization errors stay bounded because of the residual path",
          "quantization",
          "Contradicts when the residual model's errors compound at either width; supports when "
          "they stay bounded while a plain model of the same depth that trained compounds; "
          "qualifies otherwise (bounded, but with no trained plain model to show that the "
          "residual path is the reason, or with one bounded too)."),
    Claim("precision-loses-resolution", "In low precision the growing stream loses resolution",
          "precision",
          "Supports when, in both sixteen-bit formats, the share of an update lost in the add "
          "is larger at the last block than at the first; contradicts when smaller in both; "
          "qualifies otherwise."),
    Claim("add-is-cheap", "The add costs next to nothing in arithmetic", "flops",
          "Supports when the adds' share of a block's forward arithmetic is below one part in a "
          "hundred in both the lab's model and the realistic one; contradicts when above a "
          "tenth in either; qualifies otherwise.",
          construction="A count, not a measurement: an add costs one operation per "
          "coordinate and a matrix product a multiple of the width, so the widths the lab "
          "chose fix the share."),
    Claim("add-moves-memory", "The add costs memory traffic rather than arithmetic", "flops",
          "Supports when, in one forward of the lab's model, the residual adds do less than a "
          "tenth of the matrix products' floating-point operations per byte moved; contradicts "
          "when at least half as many; qualifies otherwise.",
          construction="A count from the tape: an add does one operation for every three "
          "values it reads and writes, a matrix product one for every few, whatever the model "
          "learned."),
    Claim("stream-dominates-memory", "Activation memory is dominated by the residual tensors",
          "memory",
          "Supports when the stream's states hold more than half of what a training step keeps "
          "besides the parameters; contradicts when they hold less than a quarter; qualifies "
          "otherwise."),
    Claim("bad-shortcut-attenuates",
          "A badly initialized projection shortcut brings back attenuation", "projection",
          "Supports when the badly scaled shortcut keeps less than a tenth of the gradient ratio "
          "the random shortcut keeps (the same matrix without the factor); contradicts when it "
          "keeps as much; qualifies otherwise.",
          construction="The badly scaled shortcut is the random one times a gain below one "
          "that the lab chose, so the gradient shrinks by about that gain at every widening "
          "block: the gain and the number of blocks chosen decide the rule, not the run."),
)

CLAIMS = (*_TRAINING, *_ANALYSES)
