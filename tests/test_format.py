"""Tests of diagrams.format: display formats, the traced span, and what counts as a number."""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagrams.errors import RenderError
from diagrams.format import format_value, number_tokens, positional, traced
from tracefile import Trace
from tracefile.errors import TracePathError


@pytest.mark.parametrize(("value", "fmt", "text"), [
    (2.0, "exact", "2"),
    (-2.25, "exact", "−2.25"),
    (2e-06, "exact", "0.000002"),
    (0.00390625, "exact", "0.00390625"),
    (1e16, "exact", "10000000000000000"),
    (-0.0, "exact", "−0"),
    (0.0078125, "fixed6", "0.007812"),
    (5.869134673213756e-10, "sci", "5.87\u00a0×\u00a010⁻¹⁰"),
    (-31640.625, "sci", "−3.16\u00a0×\u00a010⁴"),
    (-0.00390625, "fixed6", "−0.003906"),
    (2.0, "fixed6", "2.000000"),
    (1e-06, "fixed6", "0.000001"),
    (1.2616451137981413, "sig4", "1.262"),
    (0.05477184404938454, "sig4", "0.05477"),
    (-2527.3, "sig4", "−2527"),
    (1.0, "sig4", "1"),
    (1.7976931348623157e308, "sig4", "1.80\u00a0×\u00a010³⁰⁸"),  # too large: scientific
    (1.2345e-05, "sig4", "1.23\u00a0×\u00a010⁻⁵"),
    ((2.0, -1.0), "exact", "[2, −1]"),
    ((2.0, -1.0), "fixed6", "[2.000000, −1.000000]"),
    ((2, 2), "exact", "[2, 2]"),
    ((2, 2), "fixed6", "[2, 2]"),
    (4, "exact", "4"),
    (4, "fixed6", "4"),
    (True, "exact", "true"),
    (False, "fixed6", "false"),
    # a yes or no in the page's own words; a share as a percentage
    (True, "moved/stayed", "moved"),
    (False, "flat/still falling", "still falling"),
    (0.0625, "percent", "6.25%"),
    (0.99999988, "percent", "100.0%"),  # not a whole hundred
    ((0.5, 0.25), "percent", "[50%, 25%]"),
    (1, "percent", "100%"),
    ("residual.branch.weight", "exact", "residual.branch.weight"),
    (("a.b", "c.d"), "exact", "a.b, c.d"),
])
def test_format_value(value: object, fmt: str, text: str) -> None:
    assert format_value(value, fmt) == text


def test_minus_is_u2212_never_hyphen() -> None:
    assert "-" not in format_value((-1.5, -2e-06, -3.0), "exact")
    assert "-" not in format_value(-0.5, "fixed6")


def test_unknown_format_is_a_render_error() -> None:
    with pytest.raises(RenderError, match="unknown display format 'fixed3'"):
        format_value(1.0, "fixed3")
    with pytest.raises(RenderError, match="words a yes or no, not a float"):
        format_value(1.0, "moved/stayed")


WHAT = ("The plain stack&#39;s activation. Component 1 (1 of 2). The activations after each "
        "layer, plain and residual (depth 4).")


def test_traced_span_carries_path_format_and_exact_value(trace: Trace) -> None:
    assert str(traced(trace, "FORWARD.output")) == (
        '<span class="tv" data-trace="residual-connections-v2:FORWARD.output" '
        'data-what="The block&#39;s output y = x + F(x). y = x + F(x) for the fixture." '
        'data-format="exact" data-exact="[1.0,-3.25]">[1, −3.25]</span>'
    )
    # A qualified path gives the same span: the attribute always names the trace.
    assert traced(trace, "residual-connections-v2:FORWARD.output") == traced(
        trace, "FORWARD.output")
    assert str(traced(trace, "STACK[4].plain[0]", "fixed6")) == (
        '<span class="tv" data-trace="residual-connections-v2:STACK[4].plain[0]" '
        f'data-what="{WHAT}" data-format="fixed6" data-exact="0.0078125">0.007812</span>'
    )
    # Shown as stored: no data-exact. Another element may carry it (a table's cell).
    assert str(traced(trace, "STACK[4].plain[0]", "exact", "td")) == (
        '<td class="tv" data-trace="residual-connections-v2:STACK[4].plain[0]" '
        f'data-what="{WHAT}" data-format="exact">0.0078125</td>'
    )
    # A long name may break at a hyphen (data-name), a long list after a comma; a number,
    # or a value as short as one, never.
    assert " data-name>" in str(traced(trace, "ZERO-BRANCH.name"))


def test_traced_unknown_path_is_a_trace_path_error(trace: Trace) -> None:
    with pytest.raises(TracePathError):
        traced(trace, "FORWARD.outptu")


def test_traced_escapes_hostile_names(hostile_trace: Trace, hostile_name: str) -> None:
    span = str(traced(hostile_trace, "PARAMETER.name"))
    assert "<script" not in span and "{{" not in span and "$" not in span and "*" not in span
    assert span.count("<") == 2 and span.count(">") == 2  # only the span's own tags
    display = span[span.index(">") + 1 : span.rindex("<")]
    assert html.unescape(display) == hostile_name
    assert "data-exact" not in span  # shown as stored


@pytest.mark.parametrize(("text", "tokens"), [
    ("the value 0.42 here", ["0.42"]),
    ("y = −2.25, then -2.25", ["−2.25", "-2.25"]),
    ("chapter 24.", ["24"]),
    ("step 1e-06 and 0.000002", ["1e-06", "0.000002"]),
    ("[2, −1]", ["2", "−1"]),
    ("(0.5)", ["0.5"]),
    ("float64 v1 UTF-8 residual-connections-v2 h2 x_1 F5", []),
    ("residual.stack.0.branch.weight", []),
    ("version 1.2.3", ["1.2.3"]),
    ("2.25x or 3em", []),
    ("x̄₁ and ᵀ", []),
    # A leading-dot number is still a number to a reader.
    ("a gain of .5, or −.5, or -.5e-3", [".5", "−.5", "-.5e-3"]),
    ("(.25)", [".25"]),
    ("x.5 a..5 v.5 stack.0 .5em", []),
    # Any decimal digit, not only ASCII ones.
    ("full-width ５ and Arabic-Indic ٣", ["５", "٣"]),
    # Superscripts, fractions and numerals are numbers; a subscript is an index.
    ("10³ and ½, x², Ⅻ, ③", ["10³", "½", "²", "Ⅻ", "③"]),
    ("1.63\u00a0×\u00a010⁻⁴", ["1.63", "10", "⁴"]),
])
def test_number_tokens(text: str, tokens: list[str]) -> None:
    assert number_tokens(text) == tokens


def test_number_tokens_round_trip_every_formatted_value(trace: Trace) -> None:
    for value, fmt in [(trace.stack[4].plain, "fixed6"), (trace.gradcheck.step, "exact")]:
        shown = format_value(value, fmt)
        assert number_tokens(shown) and all(token in shown for token in number_tokens(shown))


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_positional_matches_numpy_shortest_positional(value: float) -> None:
    # The site formats without numpy (it is not imported on the site side); numpy's
    # format_float_positional(unique=True, trim="-") is the reference for the same digits.
    import numpy as np

    assert positional(value) == np.format_float_positional(value, unique=True, trim="-")


class Values:
    """A trace's two methods ``traced`` calls, over a dict of values (an unqualified path)."""

    def __init__(self, **values: object) -> None:
        self.values = values

    def resolve(self, path: str) -> object:
        return self.values[path.split(":")[-1]]

    def qualified(self, path: str) -> str:
        return f"t:{path}"

    def describe(self, path: str) -> str:
        return f"the value {path}"


def test_a_value_as_short_as_a_number_never_breaks() -> None:
    from diagrams.format import WHOLE_UP_TO

    values = Values(short=(2.0, 2.0, -1.0, -1.0), long=tuple(float(n) for n in range(12)),
                     name="known-residual", names=("zero-weight.weight", "zero-scale.weight"))
    assert len(format_value(values.resolve("short"))) <= WHOLE_UP_TO
    assert " data-list" not in str(traced(values, "short"))  # "[2, 2, −1, −1]": one piece
    assert " data-name" not in str(traced(values, "name"))
    assert " data-list" in str(traced(values, "long"))  # past a phone's width: breaks
    assert " data-name" in str(traced(values, "names"))
