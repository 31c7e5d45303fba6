"""Value paths into parsed traces (docs/trace.md, "Addressing a value").

Contract: a value path is ``RECORD.key`` or ``RECORD[key-value].key``, optionally followed by
an element index ``[i]`` and optionally qualified by the trace it belongs to
(``gradient-flow-v3:HIGHWAY.plain``). A keyed record's key value is matched as the trace writes
it (``SCALED[0.5]``, ``STACK[4]``), so each value has exactly one path per trace.
``PathIndex`` is built once per trace (a dict per record kind), so a lookup is O(1) however
many records a trace holds; anything that names nothing raises ``TracePathError`` saying what
is wrong and what exists. ``all_paths`` lists every whole-value path in trace order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tracefile.errors import TracePathError, shorten
from tracefile.schema import Record, RecordSpec, TraceSchema
from tracefile.values import trace_repr

PATH_RE = re.compile(
    r"(?:(?P<trace>[a-z][a-z0-9-]{0,80}-v[1-9][0-9]{0,3}):)?"
    r"(?P<kind>[A-Z][A-Z-]*)(?:\[(?P<key>[^\[\]]{1,64})\])?"
    r"\.(?P<field>[a-z][a-z-]*)(?:\[(?P<index>0|[1-9][0-9]{0,8})\])?"
)
SYNTAX = "[TRACE-ID:]RECORD.key or [TRACE-ID:]RECORD[key-value].key, optionally followed by [index]"
#: Longer paths are rejected before the regex runs.
MAX_PATH = 200
#: How many key values an error message lists before "…".
SHOWN_KEYS = 12


def split_path(path: object) -> re.Match[str] | None:
    """The parts of a syntactically valid value path, or None."""
    if not isinstance(path, str) or len(path) > MAX_PATH:
        return None
    return PATH_RE.fullmatch(path)


def key_text(spec: RecordSpec, record: Record) -> str:
    """A keyed record's key value as the trace writes it (``0.5``, ``4``)."""
    assert spec.keyed_by is not None
    return trace_repr(record.value(spec.by_name[spec.keyed_by].attr))


class PathIndex:
    """Every record of one trace by kind (and key text), for O(1) path lookups."""

    def __init__(self, schema: TraceSchema, records: Iterable[tuple[RecordSpec, Record]],
                 where: str) -> None:
        self.schema = schema
        self.where = where
        self.once: dict[str, Record] = {}
        self.keyed: dict[str, dict[str, Record]] = {}
        for spec, record in records:
            if spec.keyed_by is None:
                self.once[spec.kind] = record
            else:
                self.keyed.setdefault(spec.kind, {})[key_text(spec, record)] = record

    def resolve(self, path: str) -> Any:
        """The typed value ``path`` names; raises TracePathError."""
        match = split_path(path)
        if match is None:
            raise self.error(path, f"not a value path; expected {SYNTAX}")
        if match["trace"] is not None and match["trace"] != self.schema.trace_id:
            raise self.error(path, f"this is {self.schema.trace_id}, not {match['trace']}")
        spec = self.schema.specs.get(match["kind"])
        if spec is None:
            raise self.error(path, f"no record {match['kind']} in {self.schema.trace_id}; "
                             f"records are {self.schema.kind_list()}")
        record = self.record(path, spec, match["key"])
        key = spec.by_name.get(match["field"])
        if key is None:
            raise self.error(path, f"{spec.kind} has no key {match['field']}; its keys are "
                             f"{', '.join(spec.key_names())}")
        value = record.value(key.attr)
        return value if match["index"] is None else self.element(path, spec, key.name, value,
                                                                  int(match["index"]))

    def record(self, path: str, spec: RecordSpec, key: str | None) -> Record:
        if spec.keyed_by is None:
            if key is not None:
                raise self.error(path, f"{spec.kind} appears once and takes no [key]; "
                                 f"use {spec.kind}.key")
            return self.once[spec.kind]
        records = self.keyed.get(spec.kind, {})
        if key is not None and key in records:
            return records[key]
        shown = list(records)[:SHOWN_KEYS]
        choices = ", ".join(shown) + (", …" if len(records) > SHOWN_KEYS else "")
        if key is None:
            raise self.error(path, f"{spec.kind} is keyed by {spec.keyed_by}: use "
                             f"{spec.kind}[{spec.keyed_by}].key with {spec.keyed_by} one of "
                             f"{choices}")
        raise self.error(path, f"no {spec.kind} with {spec.keyed_by}={key}; the trace has "
                         f"{spec.keyed_by} {choices}")

    def element(self, path: str, spec: RecordSpec, key: str, value: Any, index: int) -> Any:
        if not isinstance(value, tuple):
            raise self.error(path, f"{spec.kind}.{key} is a single value; only vectors, shapes "
                             "and names take an [index]")
        if index >= len(value):
            raise self.error(path, f"index {index} out of range; {spec.kind}.{key} has "
                             f"{len(value)} elements (indexes 0..{len(value) - 1})")
        return value[index]

    def error(self, path: object, message: str) -> TracePathError:
        shown = shorten(path if isinstance(path, str) else repr(path), 80)
        return TracePathError(self.where, None, f"unknown value path {shown!r}: {message}")


def all_paths(schema: TraceSchema, records: Iterable[tuple[RecordSpec, Record]]) -> list[str]:
    """Every whole-value path, unqualified, in trace order (``CONFIG.name`` … last key)."""
    paths: list[str] = []
    for spec, record in records:
        prefix = spec.kind if spec.keyed_by is None else f"{spec.kind}[{key_text(spec, record)}]"
        paths.extend(f"{prefix}.{key}" for key in spec.key_names())
    return paths
