"""Names that Graphviz would rewrite: every escape sequence ``dot`` interprets in a label
reaches the SVG as written, and the figure check notices a drawing that is not verbatim."""

from __future__ import annotations

import re

import pytest

from diagrams import dot_parts
from diagrams.svg import render_diagram
from sitebuild.gates.figures import ExpectedDiagrams
from tracefile import Trace, parse_trace

# \N \G \L \T \H \E and \l \n \r are all rewritten by dot in some label or another.
NAMES = ["w\\Nx", "w\\Gx", "w\\Lx\\Tx\\Hx\\Ex", "w\\lx\\nx\\rx", "w\\\\x", "w\\"]


def with_name(trace_text: str, name: str) -> Trace:
    return parse_trace(trace_text.replace("residual.branch.weight", name))


@pytest.mark.parametrize("name", NAMES)
def test_names_reach_the_svg_verbatim(trace_text: str, name: str) -> None:
    svg = render_diagram("checks", with_name(trace_text, name))
    texts = re.findall(r">([^<]*)</text>", svg)
    assert name in texts, texts


def test_the_figure_check_notices_a_drawing_that_is_not_verbatim(
        trace_text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = with_name(trace_text, "w\\Gx")
    assert isinstance(ExpectedDiagrams(trace).items("checks"), list)
    # The old escaping: a backslash handed to dot as it is.
    table = {k: v for k, v in dot_parts._ESCAPES.items() if k != ord("\\")}
    monkeypatch.setattr(dot_parts, "_ESCAPES", table)
    problem = ExpectedDiagrams(trace).items("checks")
    assert isinstance(problem, str) and "Graphviz draws" in problem and "w\\Gx" in problem
