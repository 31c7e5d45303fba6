# ---
# jupyter:
#   kernelspec:
#     display_name: Python (residual-chapter)
#     language: python
#     name: residual-chapter
# ---

# %% [markdown]
# # The residual stream in a small trained decoder: run it yourself
#
# This notebook reruns the key experiments of the decoder lab with the project's own engine,
# prints what each measured, and checks the run against trace `residual-stream-v4`, the one
# the lab page was built from, line by line. Then it is your turn: each exercise asks you to
# change a depth, a width or a start, predict what the engine will measure, and run the check
# cell under it, which tells you whether your prediction holds.
#
# Run it from a checkout of the project, with a kernel whose Python has the project installed
# (`./dev setup` makes `.venv`; `.venv/bin/python -m ipykernel install --user --name
# residual-chapter` offers it to Jupyter). The engine pins its numerics before numpy loads, so
# the values printed here are the trace's to the last bit: run the first cell first, in a
# fresh kernel.

# %%
from engine.numerics import pin

pin()

from engine.data import ArithmeticCorpus
from engine.experiments.residual_stream import LAB_SEED
from engine.lab_notebook import check, same_as_trace

LAB = "residual-stream-v4"
corpus = ArithmeticCorpus()

# %% [markdown]
# ## The corpus
#
# Addition problems written as tokens, and the losses that measure what a model learned: the
# unigram loss (it learned the token frequencies only), the format-only loss (it learned where
# each kind of token goes), and the generator's floor (it learned to add).

# %%
from engine.experiments.residual_stream.corpus import corpus_facts

facts = corpus_facts(corpus)
print(f"unigram {facts.unigram:.4f}, format only {facts.format_only:.4f}, "
      f"the generator's floor {facts.generator:.4f} nats per token")

# %%
same_as_trace(LAB, "corpus", facts)

# %% [markdown]
# ## Which decoders train
#
# Part of the lab's grid: its deepest pre-norm decoders, residual and plain, at the lab's
# learning rate, over the lab's seeds, each seed a cell of its own. Every cell trains on
# its own core; with `ENGINE_CELL_CACHE` naming a folder, a trained cell is kept there and
# read back the next time. The lab trains every depth, rate and warm-up the same way.

# %%
import dataclasses

from engine.experiments.residual_stream.training import DecoderTrainingConfig, trainability

lab = DecoderTrainingConfig()
config = dataclasses.replace(lab, depths=(max(lab.depths),), lrs=(lab.lr,), postnorm_arms=())
trained = trainability(corpus, LAB_SEED, config)
for arm in trained.arms:
    print(f"{arm.arm}: final validation loss {arm.median:.4f} (median; "
          f"{arm.low:.4f} to {arm.high:.4f} over the seeds)")

# %%
same_as_trace(LAB, "training", trained, ("ARM",))

# %% [markdown]
# ## The stream is a sum
#
# The last state of the residual decoder is the embedding plus every block's write; the
# engine adds the writes up again and measures how far that sum is from the state.

# %%
from engine.experiments.residual_stream.analysis import AnalysisConfig
from engine.experiments.residual_stream.stream import logit_lens, stream_sum

residual = trained.run("residual-prenorm-eight").model
plain = trained.run("plain-prenorm-eight").model
tokens, targets = corpus.fixed_sequences("validation", AnalysisConfig().sequences)
summed = stream_sum(residual, plain, tokens)
print(f"largest error of the sum {summed.max_error:.3g}, against a largest state entry of "
      f"{summed.max_stream:.3g}")

# %%
same_as_trace(LAB, "stream", summed)

# %% [markdown]
# ## The logit lens
#
# Every state read out as if it were the last: the loss after each block.

# %%
lens = logit_lens(residual, plain, tokens, targets)
print("residual:", " ".join(f"{loss:.3f}" for loss in lens.residual))
print("plain:   ", " ".join(f"{loss:.3f}" for loss in lens.plain))

# %%
same_as_trace(LAB, "lens", lens)

# %% [markdown]
# ## Exercise: a silent start keeps the embedding
#
# Build an untrained residual decoder whose output projections start at zero, at a depth of
# your choice, and run it on the validation sequences. Predict the norm of its last state
# relative to the norm of the embedding it started from.

# %%
import numpy as np

from engine.experiments.residual_stream.common import walk
from engine.models import Decoder, DecoderConfig


def last_over_first(model: Decoder) -> float:
    states = walk(model, tokens)
    return float(np.linalg.norm(states[-1]) / np.linalg.norm(states[0]))


depth = 6  # blocks: change it
prediction = ...  # the last state's norm over the embedding's

# %%
shape = {"vocab_size": corpus.tokenizer.vocab_size, "context": tokens.shape[1], "depth": depth}
silent = Decoder(DecoderConfig(**shape, output_init="zero"))
check(prediction, last_over_first(silent),
      "Every block writes zero at the start, so the stream leaves the last block as it entered "
      "the first.")

# %% [markdown]
# ## Exercise: the same start, without the adds
#
# Now the plain decoder, the same blocks with the residual adds taken away, from the same
# silent start. Predict its last state's norm relative to the embedding's.

# %%
prediction = ...  # the last state's norm over the embedding's

# %%
erased = Decoder(DecoderConfig(**shape, variant="plain", output_init="zero"))
check(prediction, last_over_first(erased),
      "A plain block replaces the stream with what it writes, and a silent block writes zero.")

# %% [markdown]
# ## Exercise: what an add costs
#
# Each block adds to the stream twice. Pick a stream width and predict how many arithmetic
# operations the adds of one block cost per token, then compare with the engine's count.

# %%
from engine.experiments.residual_stream.cost import flops

width = 512  # the stream's width: change it
prediction = ...  # operations per token for one block's adds

# %%
count = flops("yours", width, depth, tokens.shape[1], 4 * width, 8)
check(prediction, count.add, "Each add is one addition per coordinate of the stream.")
print(f"Against attention and the MLP, the adds are {count.add_share:.2%} of a block's work.")
