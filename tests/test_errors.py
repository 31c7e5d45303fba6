"""Tests for engine/errors.py's checks: ints and reals that are not bools, and the one message
a config gives for an int out of its range."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import ConfigError, check_int
from tracefile.values import is_int, is_real


@pytest.mark.parametrize(("value", "integer", "real"), [
    (3, True, True), (np.int64(3), True, True), (True, False, False),
    (np.bool_(True), False, False),
    (2.5, False, True), (np.float32(2.5), False, True), ("3", False, False), (None, False, False),
])
def test_a_bool_is_neither_an_int_nor_a_real(value: object, integer: bool, real: bool) -> None:
    assert (is_int(value), is_real(value)) == (integer, real)


@pytest.mark.parametrize(("value", "low", "high", "message"), [
    (0, 1, None, "Owner: depth must be a positive int, got 0"),
    (True, 1, None, "Owner: depth must be a positive int, got True"),
    (-1, 0, None, "Owner: depth must be an int >= 0, got -1"),
    (9, 1, 8, r"Owner: depth must be an int in \[1, 8\], got 9"),
    (2.0, 0, None, "Owner: depth must be an int >= 0, got 2.0"),
])
def test_an_int_out_of_its_range_names_the_owner_the_range_and_the_value(
        value: object, low: int, high: int | None, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}$"):
        check_int("Owner", "depth", value, low, high)
    check_int("Owner", "depth", low, low, high)  # the lower end is in range
