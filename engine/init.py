"""Seeded weight initializers returning float64 numpy arrays.

Contract: every random initializer takes an explicit `numpy.random.Generator` as its first
argument and draws only from it, never from numpy's global state, so one seed fixes every
weight. Anything else (None, an int seed, the legacy `RandomState`) raises `ConfigError`.
Matrices have shape ``[fan_in, fan_out]`` for the row-vector convention ``y = x @ W``.
The arrays are plain data; wrap one as ``TensorValue.parameter(array, name=...)``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.errors import ConfigError, check_int
from tracefile.values import is_int, is_real


def normal(rng: np.random.Generator, shape: Sequence[int] | int, std: float) -> np.ndarray:
    """Entries drawn independently from ``N(0, std²)``; ``std = 0`` gives zeros."""
    _check_rng("normal", rng)
    std = _check_std("normal", std)
    return rng.normal(0.0, std, size=_check_shape("normal", shape)).astype(np.float64)


def xavier_normal(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """``[fan_in, fan_out]`` from ``N(0, 2 / (fan_in + fan_out))`` (Glorot & Bengio, 2010).

    Balances the variance of activations forward and of gradients backward through a
    linear or tanh layer.
    """
    _check_rng("xavier_normal", rng)
    _check_fans("xavier_normal", fan_in, fan_out)
    return normal(rng, (fan_in, fan_out), xavier_std(fan_in, fan_out))


def he_normal(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """``[fan_in, fan_out]`` from ``N(0, 2 / fan_in)`` (He et al., 2015).

    Keeps the activations' second moment constant through a linear layer followed by
    relu, which zeroes half of its inputs.
    """
    _check_rng("he_normal", rng)
    _check_fans("he_normal", fan_in, fan_out)
    return normal(rng, (fan_in, fan_out), math.sqrt(2.0 / fan_in))


def zeros(shape: Sequence[int] | int) -> np.ndarray:
    """All zeros (needs no generator): a branch whose output projection starts at 0."""
    return np.zeros(_check_shape("zeros", shape), dtype=np.float64)


def scaled_output(
    rng: np.random.Generator, fan_in: int, fan_out: int, layers: int, std: float | None = None
) -> np.ndarray:
    """A residual branch's output projection, shrunk by ``1/sqrt(2·layers)`` (GPT-2 style).

    ``[fan_in, fan_out]`` from ``N(0, (s / sqrt(2·layers))²)``, with the base std ``s``
    equal to ``std`` if given, else the Xavier std ``sqrt(2 / (fan_in + fan_out))``. Only
    the last matrix of each branch, the one whose output is added to the residual stream,
    is scaled: every block adds its branch to the same stream, so the stream's variance
    grows with the number of additions, and GPT-2 (Radford et al., 2019) divides these
    weights by ``sqrt(N)`` for ``N`` residual layers. GPT-2 counts two additions per
    transformer block (attention and MLP), hence ``2·layers`` for ``layers`` blocks.
    """
    _check_rng("scaled_output", rng)
    _check_fans("scaled_output", fan_in, fan_out)
    check_int("scaled_output", "layers", layers, 1)
    base = xavier_std(fan_in, fan_out) if std is None else _check_std("scaled_output", std)
    return normal(rng, (fan_in, fan_out), base / math.sqrt(2.0 * layers))


#: How a branch's output projection starts (`output_projection`).
OUTPUT_STARTS = ("default", "scaled", "zero")


def output_projection(start: str, rng: np.random.Generator, fan_in: int, fan_out: int,
                      layers: int) -> np.ndarray:
    """The matrix whose output joins the stream, ``[fan_in, fan_out]``, as ``start`` says:
    ``default`` Xavier-normal, ``scaled`` shrunk for ``layers`` blocks (`scaled_output`),
    ``zero`` all zeros (the branch starts as the zero function, drawing nothing from ``rng``).
    The one place both the gradients lab's stacks and the decoder start it."""
    if start == "zero":
        return zeros((fan_in, fan_out))
    if start == "scaled":
        return scaled_output(rng, fan_in, fan_out, layers)
    if start == "default":
        return xavier_normal(rng, fan_in, fan_out)
    raise ConfigError(f"output_projection: start must be one of {', '.join(OUTPUT_STARTS)}; "
                      f"got {start!r}")


def xavier_std(fan_in: int, fan_out: int) -> float:
    """``sqrt(2 / (fan_in + fan_out))``, the standard deviation `xavier_normal` draws with."""
    return math.sqrt(2.0 / (fan_in + fan_out))


def _check_rng(name: str, rng: Any) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ConfigError(
            f"{name}: rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )


def _check_std(name: str, std: Any) -> float:
    if not is_real(std) or not 0 <= std < math.inf:
        raise ConfigError(f"{name}: std must be a finite number >= 0, got {std!r}")
    return float(std)


def _check_fans(name: str, fan_in: Any, fan_out: Any) -> None:
    for label, fan in (("fan_in", fan_in), ("fan_out", fan_out)):
        check_int(name, label, fan, 1)


def _check_shape(name: str, shape: Any) -> tuple[int, ...]:
    try:
        sizes = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    except TypeError:
        sizes = (shape,)  # not iterable: reported below
    if any(not is_int(s) or s < 0 for s in sizes):
        raise ConfigError(f"{name}: shape must be non-negative ints, got {shape!r}")
    return tuple(int(s) for s in sizes)
