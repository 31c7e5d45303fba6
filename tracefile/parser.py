"""Strict parser of traces (docs/trace.md, "Trace grammar") against their declared schemas.

Contract: ``parse_trace(data, path)`` reads the header, takes the declared schema it names
(``tracefile.schemas.SCHEMAS``, or the one ``schema`` given) and returns a ``Trace`` of
immutable records, or raises ``TraceError`` carrying the
file, the 1-based line, the offending text (shortened) and what the grammar expected. No other
exception escapes, on any input (str, bytes or anything else). Checks run in file order where
possible, so the reported line is the first defect. Nothing here is quadratic: lines are split
once, regexes are anchored and free of nested quantifiers.
"""

from __future__ import annotations

import copyreg
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from tracefile.errors import TraceError, TracePathError, shorten
from tracefile.frame import check_frame, decode, identify, split_lines
from tracefile.schema import Record, RecordSpec, TraceSchema, field_name
from tracefile.schemas import SCHEMAS
from tracefile.trace import Trace
from tracefile.values import (
    ValueProblem,
    check_vector_characters,
    parse_value,
    vector_length,
)

__all__ = ["Trace", "TraceError", "load_trace", "parse_trace"]

#: A trace file larger than this is refused before it is read (64 MiB).
MAX_TRACE_BYTES = 64 * 1024 * 1024
KIND_RE = re.compile(r"[A-Z][A-Z-]*")
KEY_RE = re.compile(r"[a-z][a-z-]*")


def load_trace(path: str | Path, schema: TraceSchema | None = None) -> Trace:
    """Read (``read_limited``) and parse the trace file at ``path``."""
    return parse_trace(read_limited(Path(path)), str(path), schema)


def read_limited(path: Path, limit: int = MAX_TRACE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; TraceError otherwise. The size is
    checked before reading and the read never takes more than ``limit + 1`` bytes, so a device
    such as /dev/zero or a growing file cannot exhaust memory."""
    try:
        # Non-blocking, so that a FIFO is refused instead of waiting for a writer.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise TraceError(str(path), None, "not a regular file",
                                 expected="a trace file")
            if info.st_size > limit:
                raise TraceError(str(path), None, f"trace file too large ({info.st_size} bytes)",
                                 expected=f"at most {limit} bytes")
            data = handle.read(limit + 1)
    except OSError as err:
        raise TraceError(str(path), None, f"cannot read trace: {err.strerror or err}") from None
    if len(data) > limit:
        raise TraceError(str(path), None, "trace file too large (it grew while being read)",
                         expected=f"at most {limit} bytes")
    return data


def parse_trace(data: str | bytes, path: str = "<trace>",
                schema: TraceSchema | None = None) -> Trace:
    """Parse trace text (or its UTF-8 bytes) named ``path`` in messages.

    With ``schema`` the trace must be that one; otherwise any declared trace is accepted.
    """
    schemas = SCHEMAS if schema is None else {schema.trace_id: schema}
    text = decode(data, path)
    headers = " or ".join(repr(s.header) for s in schemas.values())
    lines = split_lines(text, path, headers)
    found = identify(lines[0], path, schemas)
    check_frame(lines, path, found)
    walker = _Records(found, lines, path)
    trace = Trace(found, walker.parse(), text, path)
    check_invariants(trace, walker.first_line, walker.keyed_lines)
    return trace


def _reduce_trace(trace: Trace) -> tuple[object, ...]:
    # A schema holds functions (its invariants), which do not pickle: a trace crosses a
    # process boundary (to a build's worker) as its text, path and schema id, parsed again.
    return _parsed_again, (trace.text, trace.path, trace.trace_id)


def _parsed_again(text: str, path: str, trace_id: str) -> Trace:
    return parse_trace(text, path, SCHEMAS[trace_id])


copyreg.pickle(Trace, _reduce_trace)


def check_invariants(trace: Trace, lines: dict[str, int],
                     keyed: dict[tuple[str, Any], int] | None = None) -> None:
    """Raise TraceError at the first declared invariant the trace's values break, at the line
    of its record (``KIND``: the first of that kind; ``KIND[key]``: that keyed record)."""
    for invariant in trace.schema.invariants:
        try:
            left, right = invariant.sides(trace.resolve)
        except TracePathError as err:  # a record or key it reads is missing
            left, right = f"cannot be evaluated ({err.message})", "a value"
        except (ArithmeticError, ValueError, TypeError, IndexError) as err:
            left, right = f"cannot be evaluated ({err})", "a value"
        if left != right or type(left) is not type(right):
            kind, _, key = invariant.record.removesuffix("]").partition("[")
            line = next((n for (k, value), n in (keyed or {}).items()
                         if k == kind and str(value) == key), None) if key else None
            raise TraceError(trace.path, line or lines.get(kind),
                             f"invariant {invariant.text} does not hold: the left side is "
                             f"{shorten(repr(left))}, the right side {shorten(repr(right))}")


class _Records:
    """Walks the record lines against RECORDS, one line at a time, in file order."""

    def __init__(self, schema: TraceSchema, lines: list[str], path: str) -> None:
        self.schema = schema
        self.records = schema.records
        self.body = lines[1:-1]
        self.footer_line = len(lines)
        self.path = path
        # The kinds of all lines, so an absent record can be told from a misplaced one.
        self.kinds = [line.partition(" ")[0] for line in self.body]
        self.first_line: dict[str, int] = {}
        self.parsed: dict[str, list[dict[str, Any]]] = {}
        self.keyed_lines: dict[tuple[str, Any], int] = {}
        self.position = 0

    def error(self, line: int, message: str, text: str = "", expected: str = "") -> TraceError:
        return TraceError(self.path, line, message, text=text, expected=expected)

    def parse(self) -> dict[str, Any]:
        for offset, line in enumerate(self.body):
            number = offset + 2
            spec = self.spec_for(self.kinds[offset], line, number, offset)
            fields = _Fields(self, spec, line, number).parse()
            if spec.keyed_by:
                self.check_key(spec, fields, line, number)
            self.first_line.setdefault(spec.kind, number)
            self.parsed.setdefault(spec.kind, []).append(fields)
        self.advance_to(None, self.footer_line, self.schema.footer, offset=len(self.body))
        return self.build()

    def spec_for(self, kind: str, line: str, number: int, offset: int) -> RecordSpec:
        if line in (self.schema.header, self.schema.footer):
            raise self.error(number, "header or footer line among the records", text=line,
                             expected="a record")
        if not KIND_RE.fullmatch(kind):
            raise self.error(number, "malformed record kind", text=line,
                             expected="KIND [A-Z][A-Z-]* followed by key=value fields")
        spec = self.schema.specs.get(kind)
        if spec is None:
            raise self.error(number, f"unknown record {shorten(kind, 40)}", text=line,
                             expected=f"one of {self.schema.kind_list()}")
        self.advance_to(spec, number, line, offset)
        return spec

    def advance_to(self, spec: RecordSpec | None, number: int, line: str, offset: int) -> None:
        """Move the cursor onto ``spec`` (None: the footer), or explain why it cannot."""
        while self.position < len(self.records):
            current = self.records[self.position]
            if current is spec:
                if spec.keyed_by is None and spec.kind in self.parsed:
                    raise self.duplicate(spec, number, line)
                return
            if current.kind not in self.parsed:
                raise self.misplaced(current, spec, number, line, offset)
            self.finish(current, number, line)
            self.position += 1
        if spec is not None:
            raise self.duplicate(spec, number, line)

    def duplicate(self, spec: RecordSpec, number: int, line: str) -> TraceError:
        first = self.first_line.get(spec.kind)
        if spec.keyed_by:
            return self.error(number, f"{spec.kind} records must be contiguous (first at line "
                              f"{first})", text=line, expected="no record after the last one")
        return self.error(number, f"duplicate record {spec.kind} (first at line {first})",
                          text=line,
                          expected=f"each of {self.schema.kind_list()} once, in this order")

    def misplaced(self, current: RecordSpec, got: RecordSpec | None, number: int, line: str,
                  offset: int) -> TraceError:
        if got is not None and got.kind in self.parsed:
            return self.duplicate(got, number, line)
        later = self.kinds.index(current.kind, offset) if current.kind in self.kinds[offset:] \
            else -1
        got_name = got.kind if got else "the footer"
        if later >= 0:
            return self.error(number, f"record out of order: {got_name} before {current.kind} "
                              f"(which is at line {later + 2})", text=line,
                              expected=f"{current.kind} here")
        return self.error(number, f"missing record {current.kind} before {got_name}",
                          text=line, expected=f"{current.kind} here")

    def finish(self, spec: RecordSpec, number: int, line: str) -> None:
        """A keyed record's run has ended: one with ``runs_to`` must have covered 0..that."""
        if spec.runs_to is None:
            return
        last = self.runs_to(spec)
        have = len(self.parsed[spec.kind])
        if have != last + 1:
            raise self.error(number, f"missing {spec.kind} {spec.keyed_by}={have} "
                             f"({self.runs_to_text(spec)}={last})", text=line,
                             expected=f"{spec.kind} {spec.keyed_by}={have} here")

    def runs_to(self, spec: RecordSpec) -> int:
        assert spec.runs_to is not None
        kind, key = spec.runs_to.split(".")
        return self.parsed[kind][0][field_name(key)]

    @staticmethod
    def runs_to_text(spec: RecordSpec) -> str:
        assert spec.runs_to is not None
        return spec.runs_to.replace(".", " ")

    def check_key(self, spec: RecordSpec, fields: dict[str, Any], line: str, number: int) -> None:
        key = spec.keyed_by
        assert key is not None
        value = fields[field_name(key)]
        runs = self.parsed.get(spec.kind, [])
        first = self.keyed_lines.get((spec.kind, value))
        if first is not None:
            raise self.error(number, f"duplicate {spec.kind} {key}={value!r} "
                             f"(first at line {first})", text=line,
                             expected=f"each {key} once")
        self.keyed_lines[(spec.kind, value)] = number
        if spec.runs_to is not None:
            last = self.runs_to(spec)
            if value != len(runs) or value > last:
                raise self.error(number, f"{spec.kind} {key}s must run 0..{last} without gaps",
                                 text=line, expected=f"{key}={len(runs)}")
        elif spec.by_name[key].kind in ("int", "float") and runs \
                and not value > runs[-1][field_name(key)]:
            # Numeric keys increase, so a sweep reads in order; word and name keys (a variant,
            # a parameter) keep the order the experiment gives them and need only be unique.
            raise self.error(number, f"{spec.kind} {key} out of order", text=line,
                             expected=f"{key} greater than {runs[-1][field_name(key)]!r}")

    def build(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for spec in self.records:
            records = [Record(spec.kind, values) for values in self.parsed[spec.kind]]
            fields[spec.attr] = tuple(records) if spec.keyed_by else records[0]
        return fields


class _Fields:
    """Parses the ``key=value`` fields of one record line against its spec."""

    def __init__(self, records: _Records, spec: RecordSpec, line: str, number: int) -> None:
        self.records = records
        self.spec = spec
        self.line = line
        self.number = number
        self.lengths = {key.name: key.length for key in spec.keys if key.length}

    def error(self, message: str, text: str, expected: str) -> TraceError:
        return self.records.error(self.number, f"{self.spec.kind}: {message}", text, expected)

    def parse(self) -> dict[str, Any]:
        tokens = self.line.split(" ")[1:]
        keys = self.spec.key_names()
        values: dict[str, Any] = {}
        for index, token in enumerate(tokens):
            key = self.key_of(token, index, tokens, keys, values)
            raw = token[len(key) + 1 :]
            values[field_name(key)] = self.value(key, raw, token, values)
        if len(values) < len(keys):
            missing = " ".join(keys[len(values) :])
            raise self.error(f"missing key(s) {missing}", self.line,
                             f"keys {' '.join(keys)} in this order")
        return values

    def key_of(self, token: str, index: int, tokens: list[str], keys: tuple[str, ...],
               values: dict[str, Any]) -> str:
        if token == "":
            raise self.error("empty field (double or trailing space)", self.line,
                             "fields separated by single spaces, no trailing space")
        key, eq, _ = token.partition("=")
        if not eq or not KEY_RE.fullmatch(key):
            raise self.error("malformed field", token, "key=value with key [a-z][a-z-]*")
        order = f"keys {' '.join(keys)} in this order"
        if field_name(key) in values:
            raise self.error(f"duplicate key {key}", token, order)
        if key not in keys:
            raise self.error(f"unknown key {key}", token, order)
        if index >= len(keys):
            raise self.error(f"extra key {key}", token, order)
        if keys[index] != key:
            want = keys[index]
            later = [t.partition("=")[0] for t in tokens[index + 1 :]]
            problem = f"key {key} out of order" if want in later else f"missing key {want}"
            raise self.error(problem, token, f"{want}=… here ({order})")
        return key

    def value(self, key: str, raw: str, token: str, values: dict[str, Any]) -> Any:
        kind = self.spec.by_name[key].kind
        try:
            if key in self.lengths and raw[:1] == "[" and raw[-1:] == "]" and len(raw) > 2:
                self.check_length(key, raw, token, values)
            return parse_value(kind, raw)
        except ValueProblem as problem:
            raise self.error(f"{key}: {problem.problem}", problem.text,
                             problem.expected) from None

    def check_length(self, key: str, raw: str, token: str, values: dict[str, Any]) -> None:
        """Count a vector's elements before parsing them: a huge vector of the wrong length
        (a 10 MB line) fails after two linear C-speed scans instead of millions of floats."""
        check_vector_characters(raw)
        shape, source = self.shape_for(self.lengths[key], values)
        want = math.prod(shape)
        got = vector_length(raw)
        if got != want:
            raise self.error(f"{key} has {got} elements but {source} is {list(shape)} "
                             f"({want} elements)", token, f"{want} elements")

    def shape_for(self, ref: str, values: dict[str, Any]) -> tuple[tuple[int, ...], str]:
        if "." in ref:
            kind, key = ref.split(".")
            return self.records.parsed[kind][0][field_name(key)], ref
        return values[field_name(ref)], f"{self.spec.kind}.{ref}"
