"""Property-based fuzz of tracefile.parse_trace: whatever the input — the golden trace with
flipped bytes, deleted, duplicated or swapped lines, spliced text, or random text and bytes —
the parser returns a Trace or raises TraceError; no other exception escapes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import GOLDEN_TRACE

from tracefile import Trace, parse_trace
from tracefile.errors import TraceError

GOLDEN = GOLDEN_TRACE.read_text(encoding="utf-8")
DATA = GOLDEN.encode("utf-8")
LINES = GOLDEN[:-1].split("\n")

FUZZ = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])
# Fragments that sit near the grammar's edges, so mutations reach deep into the parser.
TOKENS = st.sampled_from([
    " ", "=", ",", "[", "]", "\n", "\r", "\x00", "\ufeff", "nan", "inf", "-inf", "1e999",
    "1e-06", "0", "-0.0", "[2,2]", "[]", "true", "STACK", "SCALED", "depth=", "alpha=",
    "TRACE residual-connections-v2 END\n", "\ud800", "é", "<", "&", "{", "\"",
])


def parses_or_trace_error(data: str | bytes) -> None:
    try:
        result = parse_trace(data, "fuzz.trace")
    except TraceError as err:
        assert err.path == "fuzz.trace"
        assert err.line is None or err.line >= 1
        str(err)
        return
    assert isinstance(result, Trace)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(DATA) - 1), st.integers(0, 255)), min_size=1,
                max_size=4))
def test_byte_flips(flips: list[tuple[int, int]]) -> None:
    data = bytearray(DATA)
    for at, byte in flips:
        data[at] = byte
    parses_or_trace_error(bytes(data))


LINE_OPS = st.tuples(st.sampled_from(["delete", "duplicate", "swap", "truncate"]),
                     st.integers(0, len(LINES) - 1), st.integers(0, len(LINES) - 1))


@FUZZ
@given(st.lists(LINE_OPS, min_size=1, max_size=3))
def test_line_edits(ops: list[tuple[str, int, int]]) -> None:
    lines = list(LINES)
    for op, a, b in ops:
        if not lines:
            break
        a, b = a % len(lines), b % len(lines)
        if op == "delete":
            del lines[a]
        elif op == "duplicate":
            lines.insert(a, lines[a])
        elif op == "swap":
            lines[a], lines[b] = lines[b], lines[a]
        else:
            lines[a] = lines[a][: b % (len(lines[a]) + 1)]
    parses_or_trace_error("\n".join(lines) + "\n")


@FUZZ
@given(st.integers(0, len(GOLDEN)), st.integers(0, 40),
       st.lists(st.one_of(TOKENS, st.text(max_size=8)), max_size=4))
def test_spliced_text(at: int, cut: int, pieces: list[str]) -> None:
    parses_or_trace_error(GOLDEN[:at] + "".join(pieces) + GOLDEN[at + cut :])


@FUZZ
@given(st.one_of(st.text(), st.binary(),
                 st.text().map(lambda t: f"{LINES[0]}\n{t}\n{LINES[-1]}\n")))
def test_random_input(data: str | bytes) -> None:
    parses_or_trace_error(data)
