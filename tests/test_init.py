"""Tests for engine/init.py: explicit generators only, shapes, dtypes, scales, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import init
from engine.errors import ConfigError, EngineError
from engine.tensor import TensorValue


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_shapes_dtypes_and_determinism():
    for make in (
        lambda g: init.normal(g, (3, 4), 0.5),
        lambda g: init.xavier_normal(g, 3, 4),
        lambda g: init.he_normal(g, 3, 4),
        lambda g: init.scaled_output(g, 3, 4, layers=6),
    ):
        first, second, other = make(rng(7)), make(rng(7)), make(rng(8))
        assert first.shape == (3, 4) and first.dtype == np.float64
        np.testing.assert_array_equal(first, second)
        assert not np.array_equal(first, other)
    assert init.normal(rng(), 5, 1.0).shape == (5,)
    assert init.normal(rng(), (), 1.0).shape == ()
    z = init.zeros((2, 3))
    assert z.dtype == np.float64 and not z.any() and z.shape == (2, 3)


def test_draws_come_only_from_the_given_generator():
    np.random.seed(123)
    state = np.random.get_state()[1].copy()
    init.xavier_normal(rng(1), 4, 4)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    g = rng(2)
    expected = rng(2).normal(0.0, 0.5, size=(2, 2))
    np.testing.assert_array_equal(init.normal(g, (2, 2), 0.5), expected)


@pytest.mark.parametrize(
    ("make", "std"),
    [
        (lambda g: init.normal(g, (400, 500), 0.3), 0.3),
        (lambda g: init.xavier_normal(g, 400, 500), math.sqrt(2 / 900)),
        (lambda g: init.he_normal(g, 400, 500), math.sqrt(2 / 400)),
        (lambda g: init.scaled_output(g, 400, 500, 8), math.sqrt(2 / 900) / 4),
        (lambda g: init.scaled_output(g, 400, 500, 2, std=0.02), 0.01),
    ],
)
def test_sample_standard_deviation_is_the_documented_one(make, std):
    sample = make(rng(3))
    assert sample.std() == pytest.approx(std, rel=0.01)
    assert abs(sample.mean()) < 3 * std / math.sqrt(sample.size) * 2


def test_scaled_output_is_the_xavier_draw_divided_by_sqrt_2l():
    np.testing.assert_allclose(
        init.scaled_output(rng(4), 3, 5, layers=8), init.xavier_normal(rng(4), 3, 5) / 4.0,
        rtol=1e-15,
    )


def test_results_wrap_as_named_parameters():
    weight = TensorValue.parameter(init.he_normal(rng(5), 2, 3), name="block0.w1")
    assert weight.name == "block0.w1" and weight.requires_grad and weight.shape == (2, 3)


@pytest.mark.parametrize("bad", [None, 0, 42, np.random.RandomState(0), "seed"])
def test_non_generator_rng_is_refused(bad):
    with pytest.raises(ConfigError) as caught:
        init.he_normal(bad, 2, 2)
    assert isinstance(caught.value, EngineError)
    assert str(caught.value).startswith(
        "he_normal: rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got "
    )
    for call in (
        lambda: init.normal(bad, (2,), 1.0),
        lambda: init.xavier_normal(bad, 2, 2),
        lambda: init.scaled_output(bad, 2, 2, 1),
    ):
        with pytest.raises(ConfigError, match=r"rng must be a numpy\.random\.Generator"):
            call()


def test_bad_sizes_and_scales_are_refused():
    with pytest.raises(ConfigError, match=r"^xavier_normal: fan_in must be a positive int, got 0"):
        init.xavier_normal(rng(), 0, 3)
    with pytest.raises(ConfigError, match=r"^he_normal: fan_out must be a positive int, got 2.0"):
        init.he_normal(rng(), 2, 2.0)
    with pytest.raises(ConfigError, match=r"^scaled_output: layers must be a positive int"):
        init.scaled_output(rng(), 2, 2, 0)
    with pytest.raises(ConfigError, match=r"^normal: std must be a finite number >= 0"):
        init.normal(rng(), (2,), -1.0)
    with pytest.raises(ConfigError, match=r"^normal: std must be a finite number >= 0"):
        init.normal(rng(), (2,), math.nan)
    with pytest.raises(ConfigError, match=r"^zeros: shape must be non-negative ints"):
        init.zeros((2, -1))
    with pytest.raises(ConfigError, match=r"^zeros: shape must be non-negative ints"):
        init.zeros(2.5)


def test_an_output_projection_starts_one_of_three_ways_in_one_place() -> None:
    from engine.init import output_projection

    def fresh() -> np.random.Generator:
        return np.random.default_rng(7)

    assert not output_projection("zero", fresh(), 4, 3, 2).any()
    default, scaled = (output_projection(s, fresh(), 4, 3, 2) for s in ("default", "scaled"))
    assert np.array_equal(scaled, default / 2.0)  # 1/sqrt(2·layers), layers = 2
    with pytest.raises(ConfigError, match="start must be one of default, scaled, zero"):
        output_projection("xavier", fresh(), 4, 3, 2)
