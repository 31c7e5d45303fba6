# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Gradients through depth: run it yourself
#
# This notebook reruns the key experiments of the gradients lab with the project's own engine
# and prints what each measured, then the lines of trace `gradient-flow-v3` that the lab page
# was built from. Change a configuration and run a cell again to see what moves.
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
from tracefile.schemas import SCHEMAS
from tracefile.writer import experiment_lines

LAB = SCHEMAS["gradient-flow-v3"]

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
print(experiment_lines(LAB, "ten-layers", ten), end="")

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
print(experiment_lines(LAB, "random-paths", paths), end="")

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
print(experiment_lines(LAB, "sweep", sweep), end="")

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
print(experiment_lines(LAB, "placement", placement), end="")

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
print(experiment_lines(LAB, "identity", identity), end="")
