"""Tests of tracefile.parser: the golden trace parses to exact records, and every class of
defect raises TraceError naming the right line; value paths resolve or say what exists."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from golden_support import scaled_records
from paths import GOLDEN_TRACE

from tracefile import Trace, TraceSet, frame, load_trace, parse_trace, parser
from tracefile.errors import TraceError, TracePathError
from tracefile.schema import Record
from tracefile.schemas import SCHEMAS

BIG = 10 * 1024 * 1024
SPECS = SCHEMAS["residual-connections-v2"].specs
#: The footer's line in the golden trace (records are added at the end, before it).
FOOTER = len(GOLDEN_TRACE.read_text(encoding="utf-8").splitlines())


def rec(kind: str, *values: object) -> Record:
    """The record ``kind`` holding ``values`` in its declared key order."""
    keys = SPECS[kind].keys
    return Record(kind, {key.attr: value for key, value in zip(keys, values, strict=True)})


def test_golden_trace_parses_to_exact_records(trace: Trace, trace_text: str) -> None:
    max_error = float(re.search(r"max-error=(\S+)", trace_text).group(1))
    assert trace.config == rec("CONFIG", "known-residual-linear", 24, 25, (2,),
                                     "residual.branch.weight", (2, 2), (0.5, -1.0, 2.0, 0.25))
    assert trace.forward == rec("FORWARD", (2.0, -1.0), (-1.0, -2.25), (1.0, -3.25))
    assert trace.backward == rec("BACKWARD", (1.0, 1.0), (1.0, 1.0), (-0.5, 2.25), (0.5, 3.25))
    assert trace.parameter == rec("PARAMETER", "residual.branch.weight", (2, 2),
                                  (2.0, 2.0, -1.0, -1.0))
    assert trace.zero_branch == rec("ZERO-BRANCH", "residual.zero.weight", (2.0, -1.0), (1.0, 1.0),
                                              (2.0, 2.0, -1.0, -1.0), True)
    assert trace.shape_error == rec("SHAPE-ERROR", (2, 2), (2,), True, True)
    assert trace.shared_operand == rec("SHARED-OPERAND", (1.0, 1.0), (2.0, 2.0))
    assert trace.scaled == (rec("SCALED", 0.0, (2.0, -1.0)), rec("SCALED", 0.5, (1.5, -2.125)),
                            rec("SCALED", 1.0, (1.0, -3.25)))
    assert trace.stack_config == rec("STACK-CONFIG", 4, -0.25, 0.75)
    assert trace.stack == (
        rec("STACK", 0, (2.0, -1.0), (2.0, -1.0)),
        rec("STACK", 1, (-0.5, 0.25), (1.5, -0.75)),
        rec("STACK", 2, (0.125, -0.0625), (1.125, -0.5625)),
        rec("STACK", 3, (-0.03125, 0.015625), (0.84375, -0.421875)),
        rec("STACK", 4, (0.0078125, -0.00390625), (0.6328125, -0.31640625)),
    )
    names = tuple(f"{{}}.stack.{i}.branch.weight" for i in range(4))
    assert trace.stack_gradient == rec("STACK-GRADIENT",
        (0.00390625, 0.00390625), (0.31640625, 0.31640625),
        tuple(n.format("plain") for n in names), tuple(n.format("residual") for n in names), True)
    assert trace.retention == rec("RETENTION", 4, 0.00390625, 0.31640625)
    assert trace.gradcheck == rec("GRADCHECK", 2, 4, 1e-06, 2e-06, max_error, True)
    assert trace.proof == rec("PROOF", "exact", "added", "branch-owned", "forbidden")
    assert trace.replay == rec("REPLAY", True)
    assert trace.text == trace_text
    assert trace.path == "golden.trace"


def test_types_are_exact(trace: Trace) -> None:
    assert type(trace.config.chapter) is int
    assert all(type(v) is float for v in trace.forward.output)
    assert all(type(v) is int for v in trace.config.shape)
    assert trace.replay.bitwise is True
    with pytest.raises(AttributeError, match="immutable"):
        trace.forward.output = (0.0, 0.0)  # type: ignore[misc]


def test_bytes_and_str_give_the_same_trace(trace: Trace, trace_text: str) -> None:
    assert parse_trace(trace_text.encode("utf-8"), "golden.trace") == trace


def test_load_trace_reads_a_file(tmp_path: Path, trace_text: str) -> None:
    path = tmp_path / "t.trace"
    path.write_bytes(trace_text.encode("utf-8"))
    assert load_trace(path).stack[4].residual == (0.6328125, -0.31640625)
    with pytest.raises(TraceError) as err:
        load_trace(tmp_path / "missing.trace")
    assert err.value.line is None and "cannot read" in str(err.value)


# ---- defects: each mutation of the golden text must fail at a known line --------------------

def lines_of(text: str) -> list[str]:
    return text[:-1].split("\n")


def edit(change: Callable[[list[str]], None]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        lines = lines_of(text)
        change(lines)
        return "\n".join(lines) + "\n"
    return apply


def sub(line: int, old: str, new: str) -> Callable[[str], str]:
    def change(lines: list[str]) -> None:
        assert old in lines[line - 1], (old, lines[line - 1])
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return edit(change)


def swap(a: int, b: int) -> Callable[[str], str]:
    def change(lines: list[str]) -> None:
        lines[a - 1], lines[b - 1] = lines[b - 1], lines[a - 1]
    return edit(change)


def delete(line: int) -> Callable[[str], str]:
    return edit(lambda lines: lines.pop(line - 1))


def duplicate(line: int) -> Callable[[str], str]:
    return edit(lambda lines: lines.insert(line, lines[line - 1]))


def insert(before: int, text: str) -> Callable[[str], str]:
    return edit(lambda lines: lines.insert(before - 1, text))


DEFECTS: list[tuple[str, Callable[[str], str], int, str]] = [
    ("empty file", lambda t: "", 1, "empty file"),
    ("missing header", delete(1), 1, "missing header"),
    ("other version header", sub(1, "v2", "v3"), 1, "unsupported trace version"),
    ("other version footer", sub(FOOTER, "v2", "v3"), FOOTER, "unsupported trace version"),
    ("missing footer", delete(FOOTER), FOOTER - 1, "missing footer"),
    ("truncated mid-line", lambda t: t[:-40], FOOTER - 1, "no final newline"),
    ("no final newline", lambda t: t[:-1], FOOTER, "no final newline"),
    ("trailing garbage", lambda t: t + "garbage\n", FOOTER + 1, "text after the footer"),
    ("blank line", insert(6, ""), 6, "blank line"),
    ("CRLF", lambda t: t.replace("\n", "\r\n"), 1, "CRLF"),
    ("CRLF on one line", sub(4, "]", "]\r") , 4, None),
    ("byte order mark", lambda t: "\ufeff" + t, 1, "byte order mark"),
    ("trailing space", sub(3, "-3.25]", "-3.25] "), 3, "empty field"),
    ("double space", sub(3, " branch=", "  branch="), 3, "empty field"),
    ("unknown record", insert(5, "FOO bar=1"), 5, "unknown record FOO"),
    ("malformed kind", insert(5, "foo bar=1"), 5, "malformed record kind"),
    ("header among records", insert(5, "TRACE residual-connections-v2 BEGIN"), 5, "header"),
    ("duplicate record", duplicate(3), 4, "duplicate record FORWARD"),
    ("duplicate record at end", insert(FOOTER, "REPLAY bitwise=true"), FOOTER,
     "duplicate record REPLAY"),
    ("earlier record repeated", insert(8, "FORWARD input=[2.0,-1.0] branch=[-1.0,-2.25] "
                                          "output=[1.0,-3.25]"), 8, "duplicate record FORWARD"),
    ("missing record", delete(7), 7, "missing record SHAPE-ERROR"),
    ("missing last record", delete(22), 22, "missing record REPLAY"),
    ("records out of order", swap(3, 4), 3, "out of order"),
    ("keyed records split", swap(11, 12), 12, "SCALED records must be contiguous"),
    ("duplicate keyed record", duplicate(10), 11, "duplicate SCALED alpha=0.5"),
    ("keyed records out of order", swap(9, 10), 10, "SCALED alpha out of order"),
    ("STACK depth gap", delete(15), 15, "STACK depths must run 0..4"),
    ("STACK duplicate depth", duplicate(14), 15, "duplicate STACK depth=1"),
    ("STACK missing last depth", delete(17), 17, "missing STACK depth=4"),
    ("STACK beyond layers", insert(18, "STACK depth=5 plain=[1.0,1.0] residual=[1.0,1.0]"),
     18, "STACK depths must run 0..4"),
    ("STACK-CONFIG fewer layers", sub(12, "layers=4", "layers=3"), 17, "STACK depths"),
    ("field without =", sub(22, "bitwise=true", "bitwise"), 22, "malformed field"),
    ("bad key", sub(22, "bitwise=", "Bitwise="), 22, "malformed field"),
    ("missing key", sub(2, " chapter=24", ""), 2, "missing key chapter"),
    ("missing last key", sub(20, " passed=true", ""), 20, "missing key(s) passed"),
    ("extra key", sub(22, "true", "true extra=1"), 22, "unknown key extra"),
    ("key out of order", sub(3, "input=[2.0,-1.0] branch=[-1.0,-2.25]",
                             "branch=[-1.0,-2.25] input=[2.0,-1.0]"), 3, "key branch out of order"),
    ("duplicate key", sub(22, "true", "true bitwise=true"), 22, "duplicate key bitwise"),
    ("int with leading zero", sub(2, "chapter=24", "chapter=024"), 2, "bad int"),
    ("negative int", sub(12, "layers=4", "layers=-4"), 12, "bad int"),
    ("huge int", sub(2, "chapter=24", "chapter=" + "9" * 40), 2, "int too large"),
    ("bad float", sub(20, "step=1e-06", "step=abc"), 20, "bad float"),
    ("float not shortest", sub(20, "step=1e-06", "step=1e-6"), 20, "shortest round-trip"),
    ("float with trailing zero", sub(10, "alpha=0.5", "alpha=0.50"), 10, "shortest round-trip"),
    ("integer-looking float", sub(12, "residual-factor=0.75", "residual-factor=1"), 12,
     "bad float"),
    ("NaN", sub(19, "plain=0.00390625", "plain=nan"), 19, "NaN or infinity"),
    ("infinity", sub(19, "plain=0.00390625", "plain=-inf"), 19, "NaN or infinity"),
    ("NaN in a vector", sub(3, "input=[2.0,", "input=[nan,"), 3, "NaN or infinity"),
    ("overflow to infinity", sub(20, "step=1e-06", "step=1e999"), 20, "overflows"),
    ("bad bool", sub(22, "true", "yes"), 22, "bad bool"),
    ("bad shape", sub(2, "shape=[2]", "shape=[2,]"), 2, "bad int"),
    ("shape without brackets", sub(7, "branch=[2]", "branch=2"), 7, "bad shape"),
    ("vector without brackets", sub(8, "gradient=[2.0,2.0]", "gradient=2.0"), 8, "bad vector"),
    ("empty vector", sub(8, "gradient=[2.0,2.0]", "gradient=[]"), 8, "bad vector"),
    ("bad vector element", sub(3, "[2.0,-1.0]", "[2.0;-1.0]"), 3, "bad float"),
    ("bad word", sub(2, "name=known", "name=Known"), 2, "bad word"),
    ("name with =", sub(5, "name=residual", "name=a=b"), 5, "bad name"),
    ("name with control character", sub(5, "name=residual", "name=a\x01b"), 5, "bad name"),
    ("weight vs weight-shape", sub(2, "weight=[0.5,-1.0,2.0,0.25]", "weight=[0.5,-1.0,2.0]"),
     2, "CONFIG.weight-shape"),
    ("gradient vs shape", sub(5, "gradient=[2.0,2.0,-1.0,-1.0]", "gradient=[2.0,2.0]"), 5,
     "PARAMETER.shape is [2, 2]"),
    ("forward vs CONFIG.shape", sub(3, "output=[1.0,-3.25]", "output=[1.0,-3.25,0.0]"), 3,
     "CONFIG.shape is [2]"),
    ("backward vs CONFIG.shape", sub(4, "upstream=[1.0,1.0]", "upstream=[1.0]"), 4,
     "CONFIG.shape"),
    ("stack vs CONFIG.shape", sub(16, "residual=[0.84375,-0.421875]", "residual=[0.84375]"), 16,
     "CONFIG.shape"),
    ("zero-branch weight gradient", sub(6, "weight-gradient=[2.0,2.0,-1.0,-1.0]",
                                        "weight-gradient=[2.0]"), 6, "CONFIG.weight-shape"),
    ("shape change cascades", sub(2, "shape=[2]", "shape=[3]"), 3, "CONFIG.shape is [3]"),
]


@pytest.mark.parametrize(("mutate", "line", "words"), [d[1:] for d in DEFECTS],
                         ids=[d[0] for d in DEFECTS])
def test_defect_raises_trace_error_at_line(trace_text: str, mutate: Callable[[str], str],
                                           line: int, words: str | None) -> None:
    with pytest.raises(TraceError) as err:
        parse_trace(mutate(trace_text), "bad.trace")
    assert err.value.line == line, str(err.value)
    assert err.value.path == "bad.trace"
    if words:
        assert words in str(err.value)
    assert str(err.value).startswith(f"bad.trace:{line}: ")
    assert "\n" not in str(err.value)


def test_error_carries_text_and_expected(trace_text: str) -> None:
    with pytest.raises(TraceError) as err:
        parse_trace(sub(20, "step=1e-06", "step=abc")(trace_text))
    assert err.value.text == "abc"
    assert "repr()" in err.value.expected
    assert str(err.value) == f"<trace>:20: {err.value.message}"


def test_non_utf8_reports_line_of_first_bad_byte(trace_text: str) -> None:
    data = bytearray(trace_text.encode("utf-8"))
    at = data.index(b"ZERO-BRANCH") + 3
    data[at] = 0xFF
    with pytest.raises(TraceError) as err:
        parse_trace(bytes(data), "bad.trace")
    assert err.value.line == 6 and "not UTF-8" in str(err.value) and "0xff" in str(err.value)


def test_lone_surrogate_in_str_is_rejected(trace_text: str) -> None:
    with pytest.raises(TraceError) as err:
        parse_trace(sub(5, "name=residual", "name=\ud800")(trace_text))
    assert err.value.line == 5


@pytest.mark.parametrize("data", [None, 42, ["TRACE"], object()])
def test_non_text_input_is_a_trace_error(data: object) -> None:
    with pytest.raises(TraceError):
        parse_trace(data)  # type: ignore[arg-type]


def test_header_and_footer_only(trace_text: str) -> None:
    lines = lines_of(trace_text)
    with pytest.raises(TraceError) as err:
        parse_trace(f"{lines[0]}\n{lines[-1]}\n")
    assert err.value.line == 2 and "missing record CONFIG" in str(err.value)


@pytest.mark.parametrize("where", ["vector", "name", "garbage", "int"])
def test_ten_megabyte_line_fails_fast_with_short_message(trace_text: str, where: str) -> None:
    lines = lines_of(trace_text)
    if where == "vector":
        lines[2] = "FORWARD input=[" + ",".join(["1.5"] * (BIG // 4)) + "] branch=[1.0,1.0]"
    elif where == "name":
        lines[4] = "PARAMETER name=" + "a" * BIG + "= shape=[2,2] gradient=[1.0,1.0,1.0,1.0]"
    elif where == "garbage":
        lines[2] = "X" * BIG
    else:
        lines[1] = lines[1].replace("chapter=24", "chapter=" + "7" * BIG)
    text = "\n".join(lines) + "\n"
    # How fast is the bench's business (benchmarks/bench_build.py), not a timed assertion's.
    with pytest.raises(TraceError) as err:
        parse_trace(text)
    assert err.value.line in (2, 3, 5)
    assert len(str(err.value)) < 600


def test_a_trace_at_the_record_limit_parses_and_one_more_is_refused(
        trace_text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    records = len(trace_text.splitlines()) - 2
    monkeypatch.setattr(frame, "MAX_RECORDS", records + 3)
    assert len(parse_trace(scaled_records(trace_text, 3)).scaled) == len(
        parse_trace(trace_text).scaled) + 3
    with pytest.raises(TraceError) as raised:
        parse_trace(scaled_records(trace_text, 4), "big.trace")
    assert raised.value.line == records + 3 + 2
    assert str(raised.value).startswith(
        f"big.trace:{records + 5}: too many records: more than {records + 3} between")


def test_a_hundred_thousand_records_are_refused_before_any_is_parsed(
        trace_text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_record_parsing(*args: object) -> None:
        raise AssertionError("records were parsed")

    monkeypatch.setattr(parser, "_Records", no_record_parsing)
    with pytest.raises(TraceError, match="too many records") as raised:
        parse_trace(scaled_records(trace_text, 100_000))
    assert raised.value.line == frame.MAX_RECORDS + 2


def test_a_ten_megabyte_name_is_refused(trace_text: str) -> None:
    long = "n" * BIG
    with pytest.raises(TraceError, match=r"^<trace>:5: PARAMETER: name: name too long"):
        parse_trace(sub(5, "name=residual.branch.weight", f"name={long}")(trace_text))


def test_a_name_at_the_limit_is_legal(trace_text: str) -> None:
    from tracefile.values import MAX_NAME

    longest = "n" * MAX_NAME
    parsed = parse_trace(trace_text.replace("residual.branch.weight", longest))
    assert parsed.parameter.name == longest


# ---- value paths -------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "value"), [
    ("FORWARD.output", (1.0, -3.25)),
    ("BACKWARD.branch[1]", 2.25),
    ("STACK[4].residual", (0.6328125, -0.31640625)),
    ("STACK[0].depth", 0),
    ("SCALED[0.5].output", (1.5, -2.125)),
    ("SCALED[0.0].alpha", 0.0),
    ("STACK-GRADIENT.plain[0]", 0.00390625),
    ("STACK-GRADIENT.residual-parameters[3]", "residual.stack.3.branch.weight"),
    ("GRADCHECK.tolerance", 2e-06),
    ("CONFIG.weight-shape[1]", 2),
    ("ZERO-BRANCH.weight-gradient-nonzero", True),
    ("PROOF.broadcast", "forbidden"),
])
def test_resolve(trace: Trace, path: str, value: object) -> None:
    assert trace.resolve(path) == value


@pytest.mark.parametrize(("path", "words"), [
    ("NOPE.output", "records are CONFIG, FORWARD"),
    ("FORWARD.nope", "its keys are input, branch, output"),
    ("SCALED.output", "alpha one of 0.0, 0.5, 1.0"),
    ("SCALED[0.50].output", "the trace has alpha 0.0, 0.5, 1.0"),
    ("STACK[5].plain", "depth 0, 1, 2, 3, 4"),
    ("FORWARD[0].output", "takes no [key]"),
    ("FORWARD.output[2]", "has 2 elements"),
    ("GRADCHECK.step[0]", "single value"),
    ("forward.output", "not a value path"),
    ("FORWARD.output.x", "not a value path"),
    ("", "not a value path"),
])
def test_bad_paths_say_what_exists(trace: Trace, path: str, words: str) -> None:
    with pytest.raises(TracePathError) as err:
        trace.resolve(path)
    assert words in str(err.value)
    assert str(err.value).startswith("golden.trace: unknown value path")


def test_all_paths_resolve_and_cover_every_field(trace: Trace, trace_text: str) -> None:
    paths = trace.all_paths()
    fields = sum(line.count("=") for line in lines_of(trace_text)[1:-1])
    assert len(paths) == len(set(paths)) == fields
    assert "SCALED[0.5].output" in paths and "STACK[4].residual" in paths
    for path in paths:
        trace.resolve(path)


@pytest.mark.parametrize(("path", "words"), [
    # a key's doc, an element by its along words ({n}), the record's doc and which record
    ("FORWARD.output[1]", "The block's output y = x + F(x). Component 2 (2 of 2). "
                          "y = x + F(x) for the fixture."),
    ("STACK[4].plain", "The plain stack's activation. The activations after each layer, plain "
                       "and residual (depth 4)."),
    # ``{i}`` counts from zero; ``{key}`` and ``{RECORD.key}`` read another list at the index
    ("gradient-flow-v4:TEN-LAYERS[0.5].residual-by-depth[3]", "After 3 layers (4 of 11)."),
    ("gradient-flow-v4:SWEEP[plain-relu].stream-norm[6]", "Depth 64 (7 of 7)."),
    ("gradient-flow-v4:PATH-MAGNITUDE[1.0].mean[2]", "Paths of length 2 (3 of "),
    # no along words: the position
    ("gradient-flow-v4:SWEEP-CONFIG.depths[2]", "Item 3 of 7."),
])
def test_a_value_is_described_in_words(golden_traces: TraceSet, path: str, words: str) -> None:
    assert words in golden_traces.describe(path)


def test_every_element_of_every_recorded_list_is_described(golden_traces: TraceSet) -> None:
    # An along naming a list that is not there, or shorter, fails here, not on a page.
    described = 0
    for trace in golden_traces:
        for path in trace.all_paths():
            spec = trace.schema.specs[path.split(".")[0].split("[")[0]]
            if spec.by_name[path.rsplit(".", 1)[1]].along:
                for index in range(len(trace.resolve(path))):
                    assert "Item " not in trace.describe(f"{path}[{index}]")
                    described += 1
    assert described > 1000


def test_a_trace_pickles_as_its_text_and_is_parsed_again(golden_traces: TraceSet) -> None:
    for trace in golden_traces.traces.values():
        again = pickle.loads(pickle.dumps(trace))
        assert (again.trace_id, again.path, again.text) == (trace.trace_id, trace.path,
                                                           trace.text)
        assert again.all_paths() == trace.all_paths()
    assert pickle.loads(pickle.dumps(golden_traces)).traces.keys() == golden_traces.traces.keys()
