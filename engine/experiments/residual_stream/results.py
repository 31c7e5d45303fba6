"""All of the residual-stream lab at once: the producer of trace ``residual-stream-v4``.

Contract: `residual_stream_results()` trains the lab's decoders once (experiment 1), trains
the shallowest ten times longer (experiment 1b, `long_training`) and runs
every analysis on them with the default configurations and the lab's seed, returning one
frozen `ResidualStreamResults`, the object the trace's declaration
(tracefile/schemas/residual_stream.py) reads its values from. The analyses use the deepest
residual model and the plain model of the same depth (and, for the lesions, the shallowest
of each), on a fixed batch of validation sequences (`AnalysisConfig.sequences`). A progress
line per experiment goes to stderr; nothing timed enters the results, so the same seed gives
the same bits with the same kernels, which the results name (`engine.numerics`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from engine.data import ArithmeticCorpus
from engine.experiments.claims import decide_claims
from engine.experiments.residual_stream.claims import RULES
from engine.experiments.residual_stream.common import LabProgress
from engine.experiments.residual_stream.cost import (
    Flops,
    Intensity,
    TapeMemory,
    flops,
    intensity,
    tape_memory,
)
from engine.experiments.residual_stream.long_training import (
    LongTraining,
    LongTrainingConfig,
    long_training,
)
from engine.experiments.residual_stream.precision import Precision, precision
from engine.experiments.residual_stream.projection import (
    Projection,
    ProjectionConfig,
    projection,
)
from engine.experiments.residual_stream.quantization import Quantized, quantization
from engine.experiments.residual_stream.stream import (
    EarlyExit,
    LogitLens,
    StreamSum,
    early_exit,
    logit_lens,
    stream_sum,
)
from engine.experiments.residual_stream.surgery import (
    Lesion,
    Pruning,
    Reordering,
    lesions,
    pruning,
    reordering,
)
from engine.experiments.residual_stream.training import (
    CorpusFacts,
    DecoderTrainingConfig,
    Trainability,
    corpus_facts,
    trainability,
)
from engine.numerics import Numerics, current
from tracefile.claims import ClaimVerdict
from tracefile.schemas.residual_stream import SCHEMA

#: The lab's seed (the chapter's number).
LAB_SEED = 24
#: The realistic small model of experiment 7: width, depth, context, hidden width, heads.
REALISTIC = (768, 12, 1024, 3072, 12)


@dataclass(frozen=True)
class AnalysisConfig:
    sequences: int = 128
    thresholds: tuple[float, ...] = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.8)
    bits: tuple[int, ...] = (8, 4)


@dataclass(frozen=True)
class Analysis:
    """Which models and data the analyses (experiments two to seven) read."""

    residual: str
    plain: str
    sequences: int
    tokens: int


@dataclass(frozen=True)
class ResidualStreamResults:
    """One run of every experiment of the lab, in the order of the trace."""

    numerics: Numerics
    corpus: CorpusFacts
    training: Trainability
    long: LongTraining
    analysis: Analysis
    stream: StreamSum
    lens: LogitLens
    early_exit: EarlyExit
    lesions: tuple[Lesion, ...]
    pruning: Pruning
    reordering: Reordering
    quantization: tuple[Quantized, ...]
    precision: Precision
    flops: tuple[Flops, ...]
    memory: TapeMemory
    intensity: Intensity
    projection: Projection
    claims: tuple[ClaimVerdict, ...] = ()  # decided last, by the rules, on the values above


def residual_stream_results(seed: int = LAB_SEED, training: DecoderTrainingConfig | None = None,
                            analysis: AnalysisConfig | None = None,
                            projection_config: ProjectionConfig | None = None,
                            progress_stream: Any = None,
                            long: LongTrainingConfig | None = None) -> ResidualStreamResults:
    """Run experiments zero to eight; see the module docstring."""
    training = training or DecoderTrainingConfig()
    analysis = analysis or AnalysisConfig()
    progress = LabProgress(8, progress_stream if progress_stream is not None else sys.stderr)
    corpus = ArithmeticCorpus()
    progress(0, "corpus facts")
    facts = corpus_facts(corpus)
    trained = trainability(corpus, seed, training, progress, 1)
    long = long or LongTrainingConfig()
    progress(1, f"long runs: {', '.join(long.curves)} for {long.steps} steps")
    longer = long_training(corpus, long, training.setting(), trained, progress)
    return _analyses(corpus, seed, facts, trained, longer, training, analysis,
                     projection_config or ProjectionConfig(), progress)


def _analyses(corpus: ArithmeticCorpus, seed: int, facts: CorpusFacts, trained: Trainability,
              longer: LongTraining, training: DecoderTrainingConfig,
              config: AnalysisConfig,
              projection_config: ProjectionConfig, progress: LabProgress,
              ) -> ResidualStreamResults:
    deep, shallow = max(training.depths), min(training.depths)
    residual = next(r for r in trained.runs if r.depth == deep and r.norm == "pre")
    plain = next(r for r in trained.runs if r.depth == deep and r.variant == "plain")
    small = [r for r in trained.runs if r.depth == shallow and r.norm == "pre"]
    tokens, targets = corpus.fixed_sequences("validation", config.sequences)
    progress(2, f"stream decomposition of {residual.curve}")
    summed = stream_sum(residual.model, plain.model, tokens)
    progress(3, f"logit lens and early exit at {len(config.thresholds)} thresholds")
    lens = logit_lens(residual.model, plain.model, tokens, targets)
    exits = early_exit(residual.model, tokens, targets, config.thresholds)
    progress(4, "lesions and pruning")
    cut = lesions({r.curve: r.model for r in (residual, plain, *small)}, tokens, targets)
    pruned = pruning(residual.model, tokens, targets)
    swaps = reordering(residual.curve, residual.model, tokens, targets)
    progress(5, "weight quantization")
    quantized = quantization({"residual": residual.model, "plain": plain.model}, config.bits,
                             tokens, targets)
    progress(6, "half-precision stream")
    precise = precision(residual.model, tokens, targets)
    progress(7, "cost: flops and the tape's memory")
    hidden = training.width * training.mlp_ratio
    counts = (flops("lab", training.width, deep, corpus.sequence_length, hidden,
                    training.heads), flops("realistic", *REALISTIC))
    memory = tape_memory(residual.model, corpus, training.batch, seed)
    intense = intensity(residual.model, corpus, training.batch, seed)
    progress(8, "projection shortcuts")
    shortcuts = projection(seed, projection_config)
    progress(8, "done")
    return decide_claims(SCHEMA, ResidualStreamResults(
        numerics=current(), corpus=facts, training=trained, long=longer,
        analysis=Analysis(residual.curve, plain.curve, config.sequences, int(targets.size)),
        stream=summed, lens=lens, early_exit=exits, lesions=cut, pruning=pruned,
        reordering=swaps, quantization=quantized, precision=precise, flops=counts,
        memory=memory, intensity=intense, projection=shortcuts), RULES)
