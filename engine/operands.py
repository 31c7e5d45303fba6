"""Checking operands before they become float64 arrays on the tape.

Contract: `numeric_array` accepts real numbers and arrays of them (bool, integer and float
dtypes) and raises `OperandError` naming the op for everything else: None, text, bytes,
object or complex arrays, ragged nested lists, dates. numpy alone would turn None into NaN,
digit strings into numbers and keep object arrays, so the failure would surface later and
far from its cause.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import OperandError

# bool, signed and unsigned integers, floats: the kinds that convert to float64 exactly
# or by rounding. Objects, text, bytes, dates and complex numbers are refused.
_REAL_KINDS = frozenset("biuf")


def numeric_array(data: Any, op: str) -> np.ndarray:
    """``data`` as a numpy array of real numbers, or `OperandError` naming ``op``."""
    if data is None or isinstance(data, str | bytes):
        raise OperandError(op, _describe(data))
    try:
        array = np.asarray(data)
    except (TypeError, ValueError):  # ragged nesting
        raise OperandError(op, _describe(data)) from None
    if array.dtype.kind not in _REAL_KINDS:
        raise OperandError(op, _describe(data, array))
    return array


def _describe(data: Any, array: np.ndarray | None = None) -> str:
    if data is None:
        return "None"
    if isinstance(data, str | bytes):
        text = repr(data)
        return f"{type(data).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
    if array is not None and array.ndim > 0:
        return f"an array of dtype {array.dtype}"
    return f"a {type(data).__name__}"
