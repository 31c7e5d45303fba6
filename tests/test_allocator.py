"""Tests for engine/allocator.py: a speed setting that never changes a result."""

from __future__ import annotations

from engine.allocator import keep_freed_memory


def test_keep_freed_memory_runs_once_and_reports_a_bool():
    assert isinstance(keep_freed_memory(), bool)
    assert keep_freed_memory() is keep_freed_memory()
