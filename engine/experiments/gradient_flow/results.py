"""All of the gradients lab at once: the producer of trace ``gradient-flow-v4``.

Contract: `gradient_flow_results()` runs every experiment with its default configuration and
the lab's seed and returns one frozen `GradientFlowResults`, the object the trace's
declaration (tracefile/schemas/gradient_flow.py) reads its values from. Every experiment
draws its randomness from generators seeded by ``(seed, purpose, ...)`` tuples, so the same
seed gives the same bits with the same kernels, which the results name (`engine.numerics`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from engine.experiments.claims import decide_claims
from engine.experiments.gradient_flow.claims import RULES
from engine.experiments.gradient_flow.clipping import Clipping, ClippingConfig, gradient_clipping
from engine.experiments.gradient_flow.explorer import Explorer, ExplorerConfig, explorer_grid
from engine.experiments.gradient_flow.gradient_paths import (
    ChapterPaths,
    ChapterPathsConfig,
    RandomPaths,
    RandomPathsConfig,
    chapter_paths,
    random_paths,
)
from engine.experiments.gradient_flow.identity import IdentityConfig, IdentityFit, identity_fit
from engine.experiments.gradient_flow.placement import Placement, PlacementConfig, norm_placement
from engine.experiments.gradient_flow.scalar import TenLayers, TenLayersConfig, ten_layers
from engine.experiments.gradient_flow.silent import Silent, SilentConfig, silent_branches
from engine.experiments.gradient_flow.sweep import Sweep, SweepConfig, depth_sweep
from engine.experiments.gradient_flow.training import StackTrainingConfig, Training, trainability
from engine.numerics import Numerics, current
from tracefile.claims import ClaimVerdict
from tracefile.schemas.gradient_flow import SCHEMA

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
    identity: IdentityFit
    clipping: Clipping
    explorer: Explorer
    claims: tuple[ClaimVerdict, ...] = ()  # decided last, by the rules, on the values above


def gradient_flow_results(seed: int = LAB_SEED, training: StackTrainingConfig | None = None,
                          clipping: ClippingConfig | None = None) -> GradientFlowResults:
    """Run experiments 1-7 with their default configurations (``training`` and ``clipping``:
    other grids)."""
    return decide_claims(SCHEMA, GradientFlowResults(
        numerics=current(),
        ten_layers=ten_layers(seed, TenLayersConfig()),
        chapter_paths=chapter_paths(seed, ChapterPathsConfig()),
        random_paths=random_paths(seed, RandomPathsConfig()),
        sweep=depth_sweep(seed, SweepConfig()),
        silent=silent_branches(seed, SilentConfig()),
        placement=norm_placement(seed, PlacementConfig()),
        training=trainability(seed, training or StackTrainingConfig(), sys.stderr),
        identity=identity_fit(IdentityConfig()),
        clipping=gradient_clipping(clipping or ClippingConfig(), sys.stderr),
        explorer=explorer_grid(seed, ExplorerConfig()),
    ), RULES)
