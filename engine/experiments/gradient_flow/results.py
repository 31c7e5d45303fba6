"""All of the gradients lab at once: the producer of trace ``gradient-flow-v2``.

Contract: `gradient_flow_results()` runs every experiment with its default configuration and
the lab's seed and returns one frozen `GradientFlowResults`, the object the trace's
declaration (tracefile/schemas/gradient_flow.py) reads its values from. Every experiment
draws its randomness from generators seeded by ``(seed, purpose, ...)`` tuples, so the same
seed gives the same bits with the same kernels, which the results name (`engine.numerics`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.experiments.gradient_flow.explorer import Explorer, ExplorerConfig, explorer_grid
from engine.experiments.gradient_flow.paths import (
    ChapterPaths,
    ChapterPathsConfig,
    RandomPaths,
    RandomPathsConfig,
    chapter_paths,
    random_paths,
)
from engine.experiments.gradient_flow.placement import Placement, PlacementConfig, norm_placement
from engine.experiments.gradient_flow.scalar import TenLayers, TenLayersConfig, ten_layers
from engine.experiments.gradient_flow.silent import Silent, SilentConfig, silent_branches
from engine.experiments.gradient_flow.sweep import Sweep, SweepConfig, depth_sweep
from engine.experiments.gradient_flow.training import StackTrainingConfig, Training, trainability
from engine.numerics import Numerics, current

#: The lab's seed (the chapter's number); the experiments without randomness ignore it.
LAB_SEED = 24


@dataclass(frozen=True)
class GradientFlowResults:
    """One run of every experiment of the lab, in the order of the trace."""

    numerics: Numerics
    ten_layers: TenLayers
    chapter_paths: ChapterPaths
    random_paths: RandomPaths
    sweep: Sweep
    silent: Silent
    placement: Placement
    training: Training
    explorer: Explorer


def gradient_flow_results(seed: int = LAB_SEED) -> GradientFlowResults:
    """Run experiments 1-7 with their default configurations."""
    return GradientFlowResults(
        numerics=current(),
        ten_layers=ten_layers(seed, TenLayersConfig()),
        chapter_paths=chapter_paths(seed, ChapterPathsConfig()),
        random_paths=random_paths(seed, RandomPathsConfig()),
        sweep=depth_sweep(seed, SweepConfig()),
        silent=silent_branches(seed, SilentConfig()),
        placement=norm_placement(seed, PlacementConfig()),
        training=trainability(seed, StackTrainingConfig()),
        explorer=explorer_grid(seed, ExplorerConfig()),
    )
