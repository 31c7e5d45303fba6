"""Experiments 0 and 1: the corpus's facts, and which decoders train on it.

Contract: `corpus_facts` reads the arithmetic corpus (engine/data) and its reference losses.
`trainability` trains, with `engine.models.train.train` and one `DecoderTrainingConfig`, a residual
and a plain pre-norm decoder at every depth, then a residual post-norm decoder at the deepest
depth; every run uses the same width, steps, batch, learning rate and schedule, with no
warm-up (so the deepest residual run is also the pre-norm run without warm-up that the
post-norm run is compared with). Each `Run` holds the validation-loss curve (a fixed probe of
validation sequences, every ``eval_every`` steps), the training-loss curve, the final losses
on the whole validation split, and the loss on the sum's digits alone (a diagnostic: the
only tokens that need addition). The trained models ride along (not traced) for the
analyses. Verdict words say whether depth helped and how post-norm fared.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from engine.data import ArithmeticCorpus
from engine.experiments.residual_stream.common import (
    LabProgress,
    Vector,
    readout,
    token_losses,
    walk,
)
from engine.models import Decoder, DecoderConfig
from engine.models.train import TrainConfig, train


@dataclass(frozen=True)
class CorpusFacts:
    vocab: int
    digits: int
    problem_length: int
    problems_per_sequence: int
    sequence_length: int
    train_problems: int
    validation_problems: int
    unigram: float
    format_only: float
    generator: float
    training_sampler: float


def corpus_facts(corpus: ArithmeticCorpus) -> CorpusFacts:
    """The corpus's sizes and reference losses (nats per token)."""
    ref = corpus.reference_losses
    return CorpusFacts(corpus.tokenizer.vocab_size, corpus.config.digits,
                       corpus.problem_length, corpus.config.problems_per_sequence,
                       corpus.sequence_length, corpus.size("train"), corpus.size("validation"),
                       ref.unigram, ref.format_only, ref.generator, ref.training_sampler)


@dataclass(frozen=True)
class DecoderTrainingConfig:
    width: int = 32
    heads: int = 4
    mlp_ratio: int = 2
    depths: tuple[int, ...] = (2, 4, 8)
    steps: int = 400
    batch: int = 8
    lr: float = 1e-2
    warmup: int = 0
    min_lr_ratio: float = 0.1
    clip: float = 1.0
    eval_every: int = 20
    eval_sequences: int = 32
    curve_points: int = 25

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch, lr=self.lr,
                           warmup=self.warmup, min_lr_ratio=self.min_lr_ratio,
                           clip_norm=self.clip, eval_every=self.eval_every,
                           eval_sequences=self.eval_sequences,
                           curve_points=self.curve_points, seed=seed)


@dataclass(frozen=True)
class Run:
    """One trained model: curves and final losses (nats per token)."""

    curve: str
    variant: str
    norm: str
    depth: int
    parameters: int
    eval_steps: tuple[int, ...]
    validation: Vector
    train_steps: tuple[int, ...]
    train_loss: Vector
    final_validation: float
    final_train: float
    sum_digit_loss: float
    diverged: bool
    model: Decoder = field(compare=False, repr=False)


@dataclass(frozen=True)
class Trainability:
    width: int
    heads: int
    hidden: int
    steps: int
    batch: int
    lr: float
    warmup: int
    seed: int
    depths: tuple[int, ...]
    runs: tuple[Run, ...]
    best_residual: str
    depth_helps: str
    postnorm_outcome: str

    def run(self, curve: str) -> Run:
        return next(r for r in self.runs if r.curve == curve)


def sum_digit_loss(model: Decoder, corpus: ArithmeticCorpus) -> float:
    """Validation loss on the sum's digits only (the tokens that need the addition)."""
    inputs, targets = corpus.fixed_sequences("validation")
    losses = token_losses(readout(model, walk(model, inputs)[-1]), targets)
    digits = corpus.config.digits
    place = np.arange(targets.shape[1]) % corpus.problem_length
    return float(np.mean(losses[:, (place >= 2 * digits + 2) & (place <= 3 * digits + 2)]))


def train_one(corpus: ArithmeticCorpus, config: DecoderTrainingConfig, seed: int, variant: str,
              norm: str, depth: int) -> Run:
    model_config = DecoderConfig(vocab_size=corpus.tokenizer.vocab_size,
                                 context=corpus.sequence_length, width=config.width,
                                 depth=depth, heads=config.heads, mlp_ratio=config.mlp_ratio,
                                 variant=variant, norm=norm, seed=seed)
    with np.errstate(over="ignore", invalid="ignore"):
        result = train(corpus, model_config, config.train_config(seed))
    losses = (*result.eval_loss, *result.curve_loss, result.final_validation_loss)
    name = f"{variant}-{norm}norm-{_word(depth)}"
    return Run(name, variant, norm, depth, result.parameter_count, result.eval_steps,
               result.eval_loss, result.curve_steps, result.curve_loss,
               result.final_validation_loss, result.final_train_loss,
               sum_digit_loss(result.model, corpus), not bool(np.all(np.isfinite(losses))),
               result.model)


def trainability(corpus: ArithmeticCorpus, seed: int, config: DecoderTrainingConfig,
                 progress: LabProgress | None = None, number: int = 1) -> Trainability:
    """Residual and plain at every depth, then post-norm at the deepest; see the docstring."""
    plan = [(v, "pre", d) for v in ("residual", "plain") for d in config.depths]
    plan.append(("residual", "post", max(config.depths)))
    runs = []
    for variant, norm, depth in plan:
        if progress is not None:
            progress(number, f"training {variant} {norm}-norm depth {depth}, "
                             f"{config.steps} steps")
        runs.append(train_one(corpus, config, seed, variant, norm, depth))
    return _verdict(corpus, config, seed, tuple(runs))


def _verdict(corpus: ArithmeticCorpus, config: DecoderTrainingConfig, seed: int,
             runs: tuple[Run, ...]) -> Trainability:
    residual = [r for r in runs if r.variant == "residual" and r.norm == "pre"]
    best = min(residual, key=lambda r: r.final_validation)
    deepest = residual[-1]
    shallowest = residual[0]
    # "yes": every deeper residual model ends below every shallower one.
    finals = [r.final_validation for r in residual]
    helps = "yes" if all(a > b for a, b in itertools.pairwise(finals)) else (
        "partly" if deepest.final_validation < shallowest.final_validation
        or best is not shallowest else "no")
    post = runs[-1]
    if post.diverged:
        outcome = "diverged"
    elif post.final_validation >= corpus.reference_losses.unigram - 0.01:
        outcome = "stalled"
    else:
        outcome = "worse" if post.final_validation > deepest.final_validation else "not-worse"
    return Trainability(config.width, config.heads, config.width * config.mlp_ratio,
                        config.steps, config.batch, config.lr, config.warmup, seed,
                        config.depths, runs, best.curve, helps, outcome)


def _word(number: int) -> str:
    """A depth as a word (keys of the trace may hold no digits)."""
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
             "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")
    return words[number] if number < len(words) else "many"
