"""A deterministic synthetic corpus for the decoder lab: zero-padded additions, one character
per token.

The corpus (nothing is downloaded or copied; every string is generated):

- A *problem* is a pair ``(a, b)`` of integers in ``[0, 10^D)`` (``D = digits``, default 2),
  written with zero padding as ``aa+bb=ccc;``: both operands with ``D`` digits, the sum
  with ``D + 1``. With ``D = 2`` every problem is ``3D + 4 = 10`` characters, e.g.
  ``07+45=052;``. The alphabet is ``0123456789+=;`` (13 tokens).
- All ``10^(2D)`` problems are split once, by a permutation drawn from ``seed``, into a
  validation set (``validation_fraction`` of them) and a training set. The two share no
  problem, so the validation loss measures addition, not memory.
- A *sequence* is ``;`` (the separator doubles as start token) followed by
  ``problems_per_sequence`` problems. The model reads ``sequence[:-1]`` and predicts
  ``sequence[1:]``: its targets are exactly the problems' characters, and every problem
  starts at a known position.
- `ArithmeticCorpus.batch` draws problems uniformly (with replacement) from a split with
  the ``numpy.random.Generator`` it is given; `fixed_sequences` lays out a split's problems
  in a fixed, seed-determined order (for evaluation).

Reference losses (nats per target token, `ReferenceLosses`):

- ``unigram``: the entropy of the training targets' character frequencies, the loss of the
  best model that ignores context.
- ``format_only``: the best loss of a model that knows the layout (which positions hold
  ``+ = ;``), draws operand digits uniformly and predicts each sum digit from its marginal
  distribution: it knows the format but cannot add.
- ``generator``: the generator's own per-token entropy, exact: operand digits are uniform
  and independent (``2D · ln 10`` nats per problem) and everything else is determined by what
  came before, so it is ``2D · ln 10 / (3D + 4)`` (``0.4 ln 10 = 0.921`` for ``D = 2``).
  This is also the cross-entropy of the true generator on the held-out problems, so no model
  that does not know the split can beat it on validation.
- ``training_sampler``: the entropy of the training sampler itself, ``ln(n_train) / (3D+4)``,
  slightly below ``generator`` because the held-out problems never appear in training.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.data.tokenizer import CharTokenizer
from engine.errors import ConfigError, check_int
from tracefile.values import is_real

ALPHABET = "0123456789+=;"
SPLITS = ("train", "validation")


@dataclass(frozen=True)
class CorpusConfig:
    """The corpus's settings; checked on construction (`ConfigError`)."""

    digits: int = 2
    problems_per_sequence: int = 3
    validation_fraction: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        for label, low, high in (("digits", 1, 3), ("problems_per_sequence", 1, 64),
                                 ("seed", 0, 2**63 - 1)):
            check_int("CorpusConfig", label, getattr(self, label), low, high)
        fraction = self.validation_fraction
        if not is_real(fraction) or not (
                0 < fraction < 1):
            raise ConfigError(f"CorpusConfig: validation_fraction must lie in (0, 1), "
                              f"got {fraction!r}")


@dataclass(frozen=True)
class ReferenceLosses:
    """Per-token losses (nats) to read a model's loss against; see the module docstring."""

    unigram: float
    format_only: float
    generator: float
    training_sampler: float


class ArithmeticCorpus:
    """Every problem, the split, batching and the reference losses for one `CorpusConfig`."""

    def __init__(self, config: CorpusConfig | None = None) -> None:
        self.config = config or CorpusConfig()
        self.tokenizer = CharTokenizer(ALPHABET)
        digits = self.config.digits
        self.problem_length = 3 * digits + 4
        self.sequence_length = self.config.problems_per_sequence * self.problem_length
        count = 10 ** (2 * digits)
        order = np.random.default_rng((int(self.config.seed), 0)).permutation(count)
        held_out = max(1, round(self.config.validation_fraction * count))
        self._problems = {
            "validation": np.sort(order[:held_out]),
            "train": np.sort(order[held_out:]),
        }
        # The evaluation order of each split: a second, fixed permutation.
        self._fixed_order = {
            split: np.random.default_rng((int(self.config.seed), 1, index)).permutation(
                self._problems[split])
            for index, split in enumerate(SPLITS)
        }

    # -- problems ---------------------------------------------------------------------

    def size(self, split: str) -> int:
        """How many distinct problems ``split`` holds."""
        return len(self._problems[_split(split)])

    def operands(self, split: str) -> np.ndarray:
        """``[n, 2]`` integer array of the split's problems ``(a, b)``, in increasing order."""
        indices = self._problems[_split(split)]
        base = 10 ** self.config.digits
        return np.stack([indices // base, indices % base], axis=1)

    def text(self, a: int, b: int) -> str:
        """One problem as text, e.g. ``07+45=052;``."""
        d = self.config.digits
        if not (0 <= a < 10**d and 0 <= b < 10**d):
            raise ConfigError(f"ArithmeticCorpus: operands must lie in [0, {10**d}), got {a}, {b}")
        return f"{a:0{d}d}+{b:0{d}d}={a + b:0{d + 1}d};"

    def problem_tokens(self, indices: np.ndarray) -> np.ndarray:
        """Token rows ``[..., 3D+4]`` for problem indices ``a · 10^D + b`` (vectorized)."""
        d = self.config.digits
        base = 10**d
        a, b = np.divmod(np.asarray(indices, dtype=np.int64), base)
        plus, equals, end = (self.tokenizer.id(c) for c in "+=;")
        columns = [*_digit_columns(a, d), np.full_like(a, plus), *_digit_columns(b, d),
                   np.full_like(a, equals), *_digit_columns(a + b, d + 1), np.full_like(a, end)]
        return np.stack(columns, axis=-1)

    # -- sequences --------------------------------------------------------------------

    def batch(self, split: str, batch_size: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(inputs, targets)``, each ``[batch_size, T]`` int64, problems drawn with ``rng``."""
        if not isinstance(rng, np.random.Generator):
            raise ConfigError("ArithmeticCorpus.batch: rng must be a numpy.random.Generator")
        pool = self._problems[_split(split)]
        picks = rng.integers(0, len(pool), size=(batch_size, self.config.problems_per_sequence))
        return self._sequences(pool[picks])

    def fixed_sequences(self, split: str,
                        count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The split's problems in a fixed order, ``problems_per_sequence`` per sequence.

        With ``count=None`` every problem of the split appears (the last sequence is filled
        up from the start of the order); otherwise the first ``count`` sequences.
        """
        order = self._fixed_order[_split(split)]
        k = self.config.problems_per_sequence
        count = math.ceil(len(order) / k) if count is None else int(count)
        positions = np.arange(count * k) % len(order)
        return self._sequences(order[positions].reshape(count, k))

    def _sequences(self, problems: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = self.problem_tokens(problems).reshape(len(problems), -1)
        start = np.full((len(problems), 1), self.tokenizer.id(";"), dtype=np.int64)
        sequence = np.concatenate([start, rows], axis=1)
        return sequence[:, :-1], sequence[:, 1:]

    # -- reference losses ---------------------------------------------------------------

    @cached_property
    def reference_losses(self) -> ReferenceLosses:
        d, length = self.config.digits, self.problem_length
        train_rows = self.problem_tokens(self._problems["train"])
        counts = np.bincount(train_rows.ravel(), minlength=self.tokenizer.vocab_size)
        unigram = _entropy(counts)
        # Sum digits' marginal distributions over all problems (the generator's, not a split's).
        every = np.arange(10 ** (2 * d))
        sums = every // 10**d + every % 10**d
        sum_entropy = sum(_entropy(np.bincount(column, minlength=10))
                          for column in _digit_columns(sums, d + 1))
        operand_entropy = 2 * d * math.log(10)
        return ReferenceLosses(
            unigram=unigram,
            format_only=(operand_entropy + sum_entropy) / length,
            generator=operand_entropy / length,
            training_sampler=math.log(self.size("train")) / length,
        )

    def position_entropy(self) -> np.ndarray:
        """The generator's entropy (nats) at each character of a problem, given the past."""
        d = self.config.digits
        entropy = np.zeros(self.problem_length)
        operand_digits = [*range(d), *range(d + 1, 2 * d + 1)]
        entropy[operand_digits] = math.log(10)
        return entropy


def _digit_columns(values: np.ndarray, width: int) -> list[np.ndarray]:
    """The decimal digits of ``values``, most significant first, zero-padded to ``width``."""
    return [(values // 10 ** (width - 1 - place)) % 10 for place in range(width)]


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-np.sum(p * np.log(p)))


def _split(split: str) -> str:
    if split not in SPLITS:
        raise ConfigError(f"ArithmeticCorpus: split must be one of {', '.join(SPLITS)}; "
                          f"got {split!r}")
    return split
