"""Tests for engine/allocator.py and engine/blas.py: speed settings that never change a result."""

from __future__ import annotations

import numpy as np

from engine.allocator import keep_freed_memory
from engine.blas import blas_thread_counts, single_threaded_blas


def test_keep_freed_memory_runs_once_and_reports_a_bool():
    assert isinstance(keep_freed_memory(), bool)
    assert keep_freed_memory() is keep_freed_memory()


def test_single_threaded_blas_restores_the_previous_counts_and_keeps_results():
    before = blas_thread_counts()
    a = np.random.default_rng(0).normal(size=(64, 64))
    expected = a @ a
    with single_threaded_blas():
        assert all(count == 1 for count in blas_thread_counts())
        np.testing.assert_allclose(a @ a, expected, rtol=1e-13)
    assert blas_thread_counts() == before
