"""Training the decoder on the arithmetic corpus: Adam, global-norm clipping, fixed steps.

Contract: `train(corpus, model_config, train_config)` builds a `Decoder` from
``model_config`` (its seed fixes the weights), draws every batch from
``numpy.random.default_rng(train_config.seed)`` and runs exactly ``train_config.steps`` Adam
updates with the learning rate warmed up linearly over ``warmup`` steps and then decayed along
a cosine to ``min_lr_ratio · lr``. It returns a frozen `TrainResult`: the training loss
curve (the mean batch loss over each of ``curve_points`` equal windows), the validation loss
on a fixed subset every ``eval_every`` steps, and the final losses on a fixed training subset
and on the whole validation split. Nothing in the result is a time, so the same inputs give
the same result bit for bit; the trained model rides along (``model``, not compared).
Products run on one BLAS thread (threadpoolctl), which changes speed, not results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from engine.data import ArithmeticCorpus
from engine.errors import ConfigError, check_int
from engine.models.config import DecoderConfig
from engine.models.decoder import Decoder
from engine.optim import Adam
from tracefile.values import is_real


@dataclass(frozen=True)
class TrainConfig:
    """The optimization: steps, batch, schedule, clipping, evaluation and the batch seed."""

    steps: int = 400
    batch_size: int = 16
    lr: float = 3e-3
    warmup: int = 20
    min_lr_ratio: float = 0.1
    clip_norm: float = 1.0
    weight_decay: float = 0.0
    eval_every: int = 100
    eval_sequences: int = 64
    curve_points: int = 40
    seed: int = 0

    def __post_init__(self) -> None:
        for label in ("steps", "batch_size", "eval_every", "eval_sequences", "curve_points"):
            check_int("TrainConfig", label, getattr(self, label), 1)
        for label in ("warmup", "seed"):
            check_int("TrainConfig", label, getattr(self, label))
        for label, low, high in (("lr", 0.0, math.inf), ("clip_norm", 0.0, math.inf),
                                 ("min_lr_ratio", -1e-300, 1.0), ("weight_decay", -1e-300, 1.0)):
            value = getattr(self, label)
            if not is_real(value) or not (
                    low < value <= high) or math.isinf(value):
                raise ConfigError(f"TrainConfig: {label} must be a number in ({low:g}, {high:g}]"
                                  f", got {value!r}")

    def learning_rate(self, step: int) -> float:
        """The rate for update ``step`` (counted from 0): linear warm-up, then cosine decay."""
        if step < self.warmup:
            return self.lr * (step + 1) / self.warmup
        span = max(1, self.steps - self.warmup)
        progress = min(1.0, (step - self.warmup) / span)
        floor = self.min_lr_ratio * self.lr
        return floor + 0.5 * (self.lr - floor) * (1.0 + math.cos(math.pi * progress))


@dataclass(frozen=True)
class TrainResult:
    """What one training run produced (no wall times: deterministic)."""

    model_config: DecoderConfig
    train_config: TrainConfig
    parameter_count: int
    curve_steps: tuple[int, ...]
    curve_loss: tuple[float, ...]
    eval_steps: tuple[int, ...]
    eval_loss: tuple[float, ...]
    final_train_loss: float
    final_validation_loss: float
    model: Decoder = field(compare=False, repr=False)


def evaluate(model: Decoder, inputs: np.ndarray, targets: np.ndarray, chunk: int = 128) -> float:
    """Mean per-token cross-entropy of ``targets`` over all sequences, in chunks."""
    total, count = 0.0, 0
    for start in range(0, len(inputs), chunk):
        x, y = inputs[start:start + chunk], targets[start:start + chunk]
        total += float(model.loss(x, y).value) * y.size
        count += y.size
    return total / count


def train(corpus: ArithmeticCorpus, model_config: DecoderConfig,
          train_config: TrainConfig | None = None) -> TrainResult:
    """Train a fresh decoder; see the module docstring."""
    config = train_config or TrainConfig()
    if model_config.vocab_size != corpus.tokenizer.vocab_size or (
            model_config.context < corpus.sequence_length):
        raise ConfigError("train: the model's vocab_size and context must fit the corpus "
                          f"(V={corpus.tokenizer.vocab_size}, T={corpus.sequence_length})")
    # Threads wait on each other in products this small: one weight gradient took 3 ms
    # instead of 80 µs on a loaded two-core machine.
    with threadpool_limits(limits=1, user_api="blas"):
        return _train(corpus, model_config, config)


def _train(corpus: ArithmeticCorpus, model_config: DecoderConfig,
           config: TrainConfig) -> TrainResult:
    model = Decoder(model_config)
    optimizer = Adam(model.parameters(), lr=config.lr, clip_norm=config.clip_norm,
                     weight_decay=config.weight_decay)
    rng = np.random.default_rng(config.seed)
    probe = corpus.fixed_sequences("validation", config.eval_sequences)
    windows = np.array_split(np.arange(config.steps), min(config.curve_points, config.steps))
    window_end = {int(w[-1]): len(w) for w in windows}
    curve_steps, curve_loss, eval_steps, eval_loss = [], [], [], []
    running = 0.0
    for step in range(config.steps):
        inputs, targets = corpus.batch("train", config.batch_size, rng)
        optimizer.zero_grad()
        loss = model.loss(inputs, targets)
        loss.backward()
        optimizer.lr = config.learning_rate(step)
        optimizer.step()
        running += float(loss.value)
        if step in window_end:
            curve_steps.append(step + 1)
            curve_loss.append(running / window_end[step])
            running = 0.0
        if (step + 1) % config.eval_every == 0 or step + 1 == config.steps:
            eval_steps.append(step + 1)
            eval_loss.append(evaluate(model, *probe))
    return TrainResult(
        model_config=model_config,
        train_config=config,
        parameter_count=model.parameter_count(),
        curve_steps=tuple(curve_steps),
        curve_loss=tuple(curve_loss),
        eval_steps=tuple(eval_steps),
        eval_loss=tuple(eval_loss),
        final_train_loss=evaluate(model, *corpus.fixed_sequences(
            "train", corpus.size("validation") // corpus.config.problems_per_sequence)),
        final_validation_loss=evaluate(model, *corpus.fixed_sequences("validation")),
        model=model,
    )
