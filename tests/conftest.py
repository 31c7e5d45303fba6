"""Fixtures shared across the test suite.

- ``trace_text``: the golden trace (tests/golden/residual-connections-v1.trace) as text.
- ``trace``: ``trace_text`` parsed by ``diagrams.trace.parse_trace``.
- ``hostile_name``: a parameter name full of quotes, ``<``, ``&``, braces, Markdown and math
  characters — all legal in a trace name.
- ``hostile_trace``: the golden trace with its parameter names replaced by ``hostile_name``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracefile import Trace, parse_trace

GOLDEN_TRACE = Path(__file__).parent / "golden" / "residual-connections-v1.trace"
HOSTILE_NAME = "\"'><script>alert(1)</script>&amp;{{x}}{%y%}\\*_$z$<!--"


@pytest.fixture(scope="session")
def trace_text() -> str:
    return GOLDEN_TRACE.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def trace(trace_text: str) -> Trace:
    return parse_trace(trace_text, "golden.trace")


@pytest.fixture(scope="session")
def hostile_name() -> str:
    return HOSTILE_NAME


@pytest.fixture(scope="session")
def hostile_trace(trace_text: str) -> Trace:
    text = trace_text
    for name in ("residual.branch.weight", "residual.zero.weight", "plain.stack.0.branch.weight"):
        text = text.replace(name, HOSTILE_NAME)
    return parse_trace(text, "hostile.trace")
