# ---
# jupyter:
#   kernelspec:
#     display_name: Python (residual-chapter)
#     language: python
#     name: residual-chapter
# ---

# %% [markdown]
# # Gradients through depth: run it yourself
#
# This notebook reruns the key experiments of the gradients lab with the project's own engine,
# prints what each measured, and checks the run against trace `gradient-flow-v4`, the one the
# lab page was built from, line by line. Then it is your turn: each exercise asks you to change
# a gain, a depth or a start, predict what the engine will measure, and run the check cell
# under it, which tells you whether your prediction holds.
#
# Run it from a checkout of the project, with a kernel whose Python has the project installed
# (`./dev setup` makes `.venv`; `.venv/bin/python -m ipykernel install --user --name
# residual-chapter` offers it to Jupyter). The engine pins its numerics before numpy loads, so
# the values printed here are the trace's to the last bit: run the first cell first, in a
# fresh kernel.

# %%
from engine.numerics import pin

pin()

from engine.experiments.gradient_flow import LAB_SEED
from engine.lab_notebook import check, same_as_trace

LAB = "gradient-flow-v4"

# %% [markdown]
# ## The added one, over ten layers
#
# Scalar stacks, plain (`h = f * h`) and residual (`h = h + f * h`), one per branch
# factor `f`: the gradient the engine's backward hands to the input.

# %%
from engine.experiments.gradient_flow.scalar import TenLayersConfig, ten_layers

ten = ten_layers(LAB_SEED, TenLayersConfig())
for run in ten.runs:
    print(f"f = {run.factor:>4}: plain {run.plain:.4g} ({run.plain_fate}), "
          f"residual {run.residual:.4g} ({run.residual_fate})")

# %%
same_as_trace(LAB, "ten-layers", ten)

# %% [markdown]
# ## Paths through a random stack
#
# The stack's input gradient split into its paths, every path measured on its own and grouped
# by how many branches it passes through, at several branch gains.

# %%
from engine.experiments.gradient_flow.gradient_paths import RandomPathsConfig, random_paths

paths = random_paths(LAB_SEED, RandomPathsConfig())
for gain in paths.magnitudes:
    print(f"gain {gain.gain}: the paths' total magnitude peaks at {gain.peak_length} branches")

# %%
same_as_trace(LAB, "random-paths", paths)

# %% [markdown]
# ## The depth sweep at initialization
#
# MLP stacks of growing depth, plain and residual: the input gradient's norm at each depth.

# %%
from engine.experiments.gradient_flow.sweep import SweepConfig, depth_sweep

sweep = depth_sweep(LAB_SEED, SweepConfig())
for curve in sweep.curves:
    print(f"{curve.curve:>22}:", " ".join(f"{g:.3g}" for g in curve.input_gradient))

# %%
same_as_trace(LAB, "sweep", sweep)

# %% [markdown]
# ## Where the norm goes
#
# Post-norm and pre-norm stacks at initialization: how the gradient changes from the last
# block to the first.

# %%
from engine.experiments.gradient_flow.placement import PlacementConfig, norm_placement

placement = norm_placement(LAB_SEED, PlacementConfig())
for curve in placement.curves:
    print(f"{curve.curve:>24}: last block over first {curve.last_over_first:.4g}")

# %%
same_as_trace(LAB, "placement", placement)

# %% [markdown]
# ## Learning the identity
#
# One block trained to output its input, plain and residual, over seeds and learning rates:
# each model's best rate and its median final loss.

# %%
from engine.experiments.gradient_flow.identity import IdentityConfig, identity_fit

identity = identity_fit(IdentityConfig())
for best in identity.best:
    print(f"{best.model:>16}: best rate {best.lr}, median final loss {best.median:.4g}")

# %%
same_as_trace(LAB, "identity", identity)

# %% [markdown]
# ## Exercise: a gain of your own
#
# Pick a branch factor `f` and a number of layers, then predict the input gradient of the
# residual stack (every layer `h = h + f * h`), with the gradient leaving the top set to one.
# A formula in Python is fine. Run the check cell to compare with the engine's backward pass.

# %%
factor = 0.25  # the branch factor f: change it
layers = 6  # change it too
prediction = ...  # your prediction of the residual stack's input gradient

# %%
mine = ten_layers(LAB_SEED, TenLayersConfig(layers=layers, factors=(factor,), upstream=1.0))
check(prediction, mine.runs[0].residual,
      "Each residual layer multiplies the gradient by one plus its factor, once per layer.")

# %% [markdown]
# ## Exercise: a depth of your own, a silent start
#
# A residual MLP stack whose output projections start at zero (`residual-zero`) begins as the
# identity, however deep it is. Pick a depth and predict the norm of the gradient reaching the
# input, relative to the one leaving the output.

# %%
depth = 24  # blocks: change it
prediction = ...  # the input gradient over the output gradient

# %%
silent = depth_sweep(LAB_SEED, SweepConfig(depths=(depth,), activations=("relu",),
                                           variants=("residual-zero",)))
check(prediction, silent.curves[0].input_gradient[0],
      "Every branch starts by writing zero, so each block passes its input, and its "
      "gradient, straight through.")

# %% [markdown]
# ## Exercise: the default start, plain
#
# Now the plain stack with the default initialization, at a depth of your choice: does the
# gradient that reaches the input come out larger than the one leaving the output, or smaller?
# Answer with a word, "grows" or "shrinks", then compare.

# %%
depth = 16  # blocks: change it
prediction = ...  # "grows" or "shrinks"

# %%
plain = depth_sweep(LAB_SEED, SweepConfig(depths=(depth,), activations=("relu",),
                                          variants=("plain",)))
ratio = plain.curves[0].input_gradient[0]
check(prediction, "grows" if ratio > 1 else "shrinks",
      "The lab's depth sweep found the plain stack's gradient growing with depth: each block "
      "multiplies it by a factor a little above one.")
if prediction is not ...:  # once you have predicted, the measured ratio itself
    print(f"The input gradient is {ratio:.4g} times the output's at this depth.")
