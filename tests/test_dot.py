"""Tests of diagrams.dot: golden DOT texts, line styles that carry meaning, explicit ids,
escaped names, and labels whose every number is a traced value.

Regenerate the goldens after an intended change with: UPDATE_GOLDEN=1 pytest tests/test_dot.py
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from golden_support import assert_drawing_matches_golden
from paths import GOLDEN_DIR

from diagrams import dot
from diagrams.dot_parts import label_texts
from diagrams.format import format_value, number_tokens
from tracefile import Trace, parse_trace

DOT_GOLDEN_DIR = GOLDEN_DIR / "dot"
DIAGRAMS: dict[str, Callable[[Trace], str]] = {
    "forward": dot.forward_dot,
    "backward": dot.backward_dot,
    "checks": dot.checks_dot,
    "stack": dot.stack_dot,
    "forward-narrow": lambda trace: dot.forward_dot(trace, narrow=True),
    "backward-narrow": lambda trace: dot.backward_dot(trace, narrow=True),
    "stack-narrow": lambda trace: dot.stack_dot(trace, narrow=True),
}
STATEMENT_RE = re.compile(r"^\s*(\w+)(?: -> (\w+))? \[(.*)\];$")


def statements(text: str) -> list[tuple[str, str | None, str]]:
    """(tail, head or None, attribute text) of every node and edge statement."""
    found = []
    for line in text.splitlines():
        match = STATEMENT_RE.match(line)
        if match and match.group(1) not in ("graph", "node", "edge"):
            found.append((match.group(1), match.group(2), match.group(3)))
    return found


def attr(attrs: str, name: str) -> str | None:
    match = re.search(rf'(?<![\w-]){name}="([^"]*)"', attrs)
    return match.group(1) if match else None


@pytest.mark.parametrize("name", DIAGRAMS)
def test_matches_golden(trace: Trace, name: str) -> None:
    assert_drawing_matches_golden(DIAGRAMS[name](trace), DOT_GOLDEN_DIR / f"{name}.dot",
                                  f"{name}_dot(trace)")


@pytest.mark.parametrize("name", DIAGRAMS)
def test_deterministic(trace: Trace, name: str) -> None:
    assert DIAGRAMS[name](trace) == DIAGRAMS[name](trace)


@pytest.mark.parametrize("name", DIAGRAMS)
def test_every_statement_has_a_unique_explicit_id_and_class(trace: Trace, name: str) -> None:
    text = DIAGRAMS[name](trace)
    ids = [attr(attrs, "id") for _, _, attrs in statements(text)]
    assert ids and None not in ids
    assert len(ids) == len(set(ids))
    for _, _, attrs in statements(text):
        assert attr(attrs, "class") or attr(attrs, "style") == "invis"
    assert 'graph [id="graph"' in text


@pytest.mark.parametrize("name", DIAGRAMS)
def test_meaning_is_in_line_style_not_colour(trace: Trace, name: str) -> None:
    text = DIAGRAMS[name](trace)
    assert not re.search(r"(?<!bg)color=", text)  # no colours at all; svg.py themes them
    assert 'bgcolor="transparent"' in text
    for phrase in ("solid line: identity path", "dashed line: learned branch",
                   "double border: merge"):
        assert phrase in text
    for _, head, attrs in statements(text):
        if head is None:
            continue
        cls = attr(attrs, "class")
        if cls == "identity":
            assert attr(attrs, "style") == "solid"
        if cls == "learned":
            assert attr(attrs, "style") == "dashed"


def test_forward_split_and_merge(trace: Trace) -> None:
    text = dot.forward_dot(trace)
    edges = {(tail, head): attr(attrs, "class") for tail, head, attrs in statements(text) if head}
    assert edges[("source", "identity")] == edges[("identity", "add")] == "identity"
    assert edges[("source", "branch")] == edges[("branch", "add")] == "learned"
    assert edges[("add", "result")] == "merge"
    add = next(attrs for tail, head, attrs in statements(text) if tail == "add" and not head)
    assert attr(add, "peripheries") == "2"
    for line in ("x = [2, −1]", "F(x) = [−1, −2.25]",
                 "y = [1, −3.25]"):
        assert line in text
    assert 'rankdir="LR"' in text


def test_backward_labels(trace: Trace) -> None:
    text = dot.backward_dot(trace)
    for line in ("ȳ = [1, 1]", "J_F(x)ᵀȳ = [−0.5, 2.25]",
                 "x̄ = [0.5, 3.25]"):
        assert line in text


def test_checks_panel_labels(trace: Trace) -> None:
    text = dot.checks_dot(trace)
    for line in ("residual.branch.weight", "W̄ = [2, 2, −1, −1]",
                 "y = x = [2, −1]", "x̄ = ȳ = [1, 1]",
                 "W̄ nonzero = true", "identity [2, 2] vs branch [2]",
                 "broadcastable = true", "rejected = true", "input checks = 2",
                 "weight checks = 4", "tolerance τ = 0.000002", "passed = true",
                 "identity = exact", "gradient = added", "parameters = branch-owned",
                 "broadcast = forbidden"):
        assert line in text, line


def test_stack_has_both_columns_at_every_depth(trace: Trace) -> None:
    text = dot.stack_dot(trace)
    assert "cluster_plain" in text and "cluster_residual" in text
    # Exact values, as the prose shows them.
    assert "[0.0078125, −0.00390625]" in text and "[0.6328125, −0.31640625]" in text
    assert "x̄ = [0.00390625, 0.00390625]" in text and "x̄ = [0.31640625, 0.31640625]" in text
    merged = [tail for tail, head, attrs in statements(text)
              if not head and attr(attrs, "peripheries") == "2"]
    assert merged == ["residual_1", "residual_2", "residual_3", "residual_4"]


@pytest.mark.parametrize("name", ["forward", "backward", "stack"])
def test_the_narrow_variant_draws_the_same_labels_top_to_bottom(trace: Trace,
                                                                name: str) -> None:
    wide, narrow = DIAGRAMS[name](trace), DIAGRAMS[f"{name}-narrow"](trace)
    assert sorted(label_texts(wide)) == sorted(label_texts(narrow))
    assert 'rankdir="TB"' in narrow


def test_stack_depths_come_from_the_trace(trace_text: str) -> None:
    # The retention record names the depth too (an invariant ties it to the layer count).
    text = trace_text.replace("layers=4", "layers=3").replace("RETENTION depth=4",
                                                              "RETENTION depth=3")
    text = "\n".join(line for line in text.split("\n") if not line.startswith("STACK depth=4"))
    shallow = dot.stack_dot(parse_trace(text))
    assert "depth 3" in shallow and "depth 4" not in shallow


@pytest.mark.parametrize("name", DIAGRAMS)
def test_every_number_in_a_label_is_a_traced_value(trace: Trace, name: str) -> None:
    allowed = {
        token
        for path in trace.all_paths()
        for fmt in ("exact", "fixed6")
        for token in number_tokens(format_value(trace.resolve(path), fmt))
    }
    texts = label_texts(DIAGRAMS[name](trace))
    assert texts
    for text in texts:
        assert set(number_tokens(text)) <= allowed, text


@pytest.mark.parametrize("name", DIAGRAMS)
def test_hostile_names_are_escaped(hostile_trace: Trace, hostile_name: str, name: str) -> None:
    text = DIAGRAMS[name](hostile_trace)
    assert "<script" not in text
    for line in text.splitlines():
        assert line.count('"') % 2 == 0  # no quote in a name ever opens an attribute
    if name == "checks":  # the only diagram that shows parameter names
        escaped = hostile_name.replace("\\", "\\\\").replace("&", "&amp;")
        escaped = escaped.replace("<", "&lt;").replace(">", "&gt;")
        escaped = escaped.replace('"', "&quot;").replace("'", "&#39;")
        assert text.count(escaped) == 2
