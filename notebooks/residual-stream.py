# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The residual stream in a small trained decoder: run it yourself
#
# This notebook reruns the key experiments of the decoder lab with the project's own engine
# and prints what each measured, then the lines of trace `residual-stream-v3` that the lab
# page was built from. Change a configuration and run a cell again to see what moves.
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
from tracefile.schemas import SCHEMAS
from tracefile.writer import experiment_lines

LAB = SCHEMAS["residual-stream-v3"]
corpus = ArithmeticCorpus()

# %% [markdown]
# ## The corpus
#
# Addition problems written as tokens, and the losses that measure what a model learned: the
# unigram loss (it learned the token frequencies only), the format-only loss (it learned where
# each kind of token goes), and the generator's floor (it learned to add).

# %%
from engine.experiments.residual_stream.training import corpus_facts

facts = corpus_facts(corpus)
print(f"unigram {facts.unigram:.4f}, format only {facts.format_only:.4f}, "
      f"the generator's floor {facts.generator:.4f} nats per token")

# %%
print(experiment_lines(LAB, "corpus", facts), end="")

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
print(experiment_lines(LAB, "training", trained, ("ARM",)), end="")

# %% [markdown]
# ## The stream is a sum
#
# The last state of the residual decoder is the embedding plus every block's write; the
# engine adds the writes up again and measures how far that sum is from the state.

# %%
from engine.experiments.residual_stream.results import AnalysisConfig
from engine.experiments.residual_stream.stream import logit_lens, stream_sum

residual = trained.run("residual-prenorm-eight").model
plain = trained.run("plain-prenorm-eight").model
tokens, targets = corpus.fixed_sequences("validation", AnalysisConfig().sequences)
summed = stream_sum(residual, plain, tokens)
print(f"largest error of the sum {summed.max_error:.3g}, against a largest state entry of "
      f"{summed.max_stream:.3g}")

# %%
print(experiment_lines(LAB, "stream", summed), end="")

# %% [markdown]
# ## The logit lens
#
# Every state read out as if it were the last: the loss after each block.

# %%
lens = logit_lens(residual, plain, tokens, targets)
print("residual:", " ".join(f"{loss:.3f}" for loss in lens.residual))
print("plain:   ", " ".join(f"{loss:.3f}" for loss in lens.plain))

# %%
print(experiment_lines(LAB, "lens", lens), end="")
