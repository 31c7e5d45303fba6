"""The engine's traces: which function computes each, and its text.

Contract: every trace declared in ``tracefile.schemas.SCHEMAS`` names the engine function that
computes its frozen results (``producer``, found by ``experiment``); ``trace_text(trace_id,
results=None)`` hands those results (by default a fresh run) to the one trace writer,
``tracefile.writer.render_trace``, which follows the layout declared once for the engine and
the site. A value the trace cannot hold raises `EngineError` naming the
record and key; same inputs, same bytes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from engine.errors import EngineError
from tracefile.errors import TraceWriteError
from tracefile.schemas import CHAPTER_TRACE, SCHEMAS
from tracefile.writer import render_trace


def experiment(trace_id: str) -> Callable[[], Any]:
    """The function whose results trace ``trace_id`` holds (imported on demand, so running
    one experiment never imports another)."""
    if trace_id not in SCHEMAS:
        raise EngineError(f"trace: no trace {trace_id!r}; the engine writes "
                          f"{', '.join(SCHEMAS)}")
    module, _, function = SCHEMAS[trace_id].producer.partition(":")
    return getattr(importlib.import_module(module), function)


def trace_text(trace_id: str = CHAPTER_TRACE, results: Any = None) -> str:
    """The complete trace ``trace_id`` for ``results`` (by default, a fresh run)."""
    run = experiment(trace_id)
    try:
        return render_trace(SCHEMAS[trace_id], run() if results is None else results)
    except TraceWriteError as error:
        raise EngineError(f"trace {trace_id}: {error}") from None
