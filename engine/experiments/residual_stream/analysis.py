"""Which trained models and data the analyses (experiments two to seven) read, and the margin
of "little damage" their rules share.

Contract: `analysed(training, config)` picks, from the lab's runs (`Trainability.runs`: the
lab's seed at the lab's learning rate), the deepest residual pre-norm model, the plain model of
the same depth and the shallowest pre-norm models (for the lesions), with a fixed batch of
validation sequences (``config.sequences``); every analysis reads those trained weights and
changes none of them. The experiment ``analysis`` records which models and how many tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.experiments.registry import Experiment, register
from engine.experiments.residual_stream.corpus import TRACE, lab_corpus
from engine.experiments.residual_stream.training import Run, Trainability

#: A change of a loss smaller than this share of it does "little damage".
LITTLE = 0.01


@dataclass(frozen=True)
class AnalysisConfig:
    sequences: int = 128
    thresholds: tuple[float, ...] = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.8)
    bits: tuple[int, ...] = (8, 4)


@dataclass(frozen=True)
class Analysis:
    """Which models and data the analyses read."""

    residual: str
    plain: str
    sequences: int
    tokens: int


@dataclass(frozen=True)
class Analysed:
    """The trained runs an analysis reads, and its validation batch."""

    residual: Run
    plain: Run
    shallow: tuple[Run, ...]
    tokens: np.ndarray
    targets: np.ndarray


def deepest_residual(training: Trainability) -> Run:
    """The deepest residual pre-norm run of the lab's seed: the model the analyses read."""
    deep = max(training.depths)
    return next(r for r in training.runs if r.depth == deep and r.norm == "pre")


def analysed(training: Trainability, config: AnalysisConfig) -> Analysed:
    """The runs and the batch every analysis reads (see the module doc)."""
    deep, shallow = max(training.depths), min(training.depths)
    plain = next(r for r in training.runs if r.depth == deep and r.variant == "plain")
    small = tuple(r for r in training.runs if r.depth == shallow and r.norm == "pre")
    tokens, targets = lab_corpus().fixed_sequences("validation", config.sequences)
    return Analysed(deepest_residual(training), plain, small, tokens, targets)


def analysis(seed: int, config: AnalysisConfig, training: Trainability) -> Analysis:
    chosen = analysed(training, config)
    return Analysis(chosen.residual.curve, chosen.plain.curve, config.sequences,
                    int(chosen.targets.size))


register(Experiment(TRACE, "analysis", AnalysisConfig, analysis, needs=("training",)))
