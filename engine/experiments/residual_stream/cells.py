"""One cell of the lab's training grid: a decoder trained from one seed, and what it measured.

Contract: a `TrainingCell` names everything its run depends on (its ``repr`` keys the cell
cache of `engine.experiments.grid`, with the engine's code and this module);
``train_cell(corpus, cell)`` trains it with `engine.models.train.train` and returns numpy
arrays: the validation-probe curve, the training curve, the final losses, the loss on the
sum's digits, the share of held-out problems whose whole sum the model predicts (each digit
the most likely token after the true prefix, which is what greedy decoding gives while it
is right), the precision the weights were held in and the trained weights
(``weight:NAME``), all computed in the setting's precision. `load_model` rebuilds the
trained model, in float64.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.data import ArithmeticCorpus
from engine.experiments.residual_stream.common import readout, token_losses, walk
from engine.models import Decoder, DecoderConfig
from engine.models.train import TrainConfig, train


@dataclass(frozen=True)
class Setting:
    """What every cell of a grid shares: the model's size and the optimization."""

    width: int
    heads: int
    mlp_ratio: int
    steps: int
    batch: int
    min_lr_ratio: float
    clip: float
    eval_every: int
    eval_sequences: int
    curve_points: int
    precision: str


@dataclass(frozen=True)
class TrainingCell:
    """One run of the grid: an architecture, its learning rate and warm-up, and a seed."""

    setting: Setting
    variant: str
    norm: str
    depth: int
    lr: float
    warmup: int
    seed: int

    @property
    def curve(self) -> str:
        return f"{self.variant}-{self.norm}norm-{depth_word(self.depth)}"

    @property
    def arm(self) -> str:
        return f"{self.curve}-lr{self.lr:g}-warmup{self.warmup}"

    def model_config(self, corpus: ArithmeticCorpus) -> DecoderConfig:
        s = self.setting
        return DecoderConfig(vocab_size=corpus.tokenizer.vocab_size,
                             context=corpus.sequence_length, width=s.width, depth=self.depth,
                             heads=s.heads, mlp_ratio=s.mlp_ratio, variant=self.variant,
                             norm=self.norm, seed=self.seed, precision=s.precision)

    def train_config(self) -> TrainConfig:
        s = self.setting
        return TrainConfig(steps=s.steps, batch_size=s.batch, lr=self.lr, warmup=self.warmup,
                           min_lr_ratio=s.min_lr_ratio, clip_norm=s.clip,
                           eval_every=s.eval_every, eval_sequences=s.eval_sequences,
                           curve_points=s.curve_points, seed=self.seed)


def sum_digit_loss(model: Decoder, corpus: ArithmeticCorpus) -> tuple[float, float]:
    """Validation loss on the sum's digits only (the tokens that need the addition), and the
    share of held-out problems whose every sum digit is the model's most likely token."""
    inputs, targets = corpus.fixed_sequences("validation")
    logits = readout(model, walk(model, inputs)[-1])
    digits = corpus.config.digits
    place = np.arange(targets.shape[1]) % corpus.problem_length
    sums = (place >= 2 * digits + 2) & (place <= 3 * digits + 2)
    right = (np.argmax(logits, axis=-1) == targets)[:, sums]
    whole = right.reshape(len(targets), -1, digits + 1).all(axis=-1).reshape(-1)
    return (float(np.mean(token_losses(logits, targets)[:, sums])),
            float(np.mean(whole[:corpus.size("validation")])))


def train_cell(corpus: ArithmeticCorpus, cell: TrainingCell) -> dict[str, np.ndarray]:
    """One cell's measurements and trained weights, as arrays (see the module doc)."""
    with np.errstate(over="ignore", invalid="ignore"):
        result = train(corpus, cell.model_config(corpus), cell.train_config())
        digit_loss, accuracy = sum_digit_loss(result.model, corpus)
    losses = (*result.eval_loss, *result.curve_loss, result.final_validation_loss)
    return {"parameters": np.array(result.parameter_count),
            "eval_steps": np.array(result.eval_steps), "validation": np.array(result.eval_loss),
            "train_steps": np.array(result.curve_steps),
            "train_loss": np.array(result.curve_loss),
            "final_validation": np.array(result.final_validation_loss),
            "final_train": np.array(result.final_train_loss),
            "sum_digit_loss": np.array(digit_loss), "accuracy": np.array(accuracy),
            "diverged": np.array(not bool(np.all(np.isfinite(losses)))),
            "precision": np.array(result.model.token_embedding.value.dtype.name),
            **{f"weight:{name}": value for name, value in result.model.snapshot().items()}}


def load_model(corpus: ArithmeticCorpus, cell: TrainingCell,
               result: dict[str, np.ndarray]) -> Decoder:
    """The cell's trained decoder, rebuilt from its weights in float64 (a float32 weight is
    exact in float64), so the analyses compare against float64 whatever the training used."""
    model = Decoder(dataclasses.replace(cell.model_config(corpus), precision="float64"))
    model.load({name.removeprefix("weight:"): value for name, value in result.items()
                if name.startswith("weight:")})
    return model


def depth_word(number: int) -> str:
    """A depth as a word (keys of the trace may hold no digits)."""
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
             "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")
    return words[number] if number < len(words) else "many"


def lab_train() -> Callable[[TrainingCell], dict[str, np.ndarray]]:
    """``train_cell`` on the lab's corpus (the default `ArithmeticCorpus`, as the lab's grids
    train on), for rerunning one recorded cell on its own (`engine.cell_records`)."""
    return functools.partial(train_cell, ArithmeticCorpus())
