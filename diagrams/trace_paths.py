"""Value paths into a parsed trace (docs/trace.md, "Addressing a value").

Contract: ``resolve(trace, path)`` returns the typed value ``RECORD.key``,
``RECORD[key-value].key`` or either with an element index ``[i]`` names; anything else raises
``TracePathError`` saying what is wrong and listing what exists. A keyed record's key value is
matched as the trace writes it (``SCALED[0.5]``, ``STACK[4]``), so each value has one path.
``all_paths(trace)`` lists every whole-value path (no element indexes), in trace order.
"""

from __future__ import annotations

import re
from typing import Any

from diagrams.errors import TracePathError, shorten
from diagrams.trace_schema import RECORDS, SPECS, RecordSpec, Trace, field_name
from diagrams.trace_values import trace_repr

PATH_RE = re.compile(
    r"(?P<kind>[A-Z][A-Z-]*)(?:\[(?P<key>[^\[\]]{1,40})\])?"
    r"\.(?P<field>[a-z][a-z-]*)(?:\[(?P<index>0|[1-9][0-9]{0,8})\])?"
)
SYNTAX = "RECORD.key, RECORD[key-value].key, optionally followed by [index]"


def resolve(trace: Trace, path: str) -> Any:
    """The typed value ``path`` names in ``trace``; raises TracePathError."""
    match = PATH_RE.fullmatch(path) if isinstance(path, str) and len(path) <= 200 else None
    if match is None:
        raise _error(trace, path, f"not a value path; expected {SYNTAX}")
    spec = SPECS.get(match["kind"])
    if spec is None:
        kinds = ", ".join(s.kind for s in RECORDS)
        raise _error(trace, path, f"no record {match['kind']}; records are {kinds}")
    record = _record(trace, path, spec, match["key"])
    keys = spec.key_names()
    if match["field"] not in keys:
        raise _error(trace, path, f"{spec.kind} has no key {match['field']}; its keys are "
                     f"{', '.join(keys)}")
    value = getattr(record, field_name(match["field"]))
    if match["index"] is None:
        return value
    if not isinstance(value, tuple):
        raise _error(trace, path, f"{spec.kind}.{match['field']} is a single value; only "
                     "vectors, shapes and names take an [index]")
    index = int(match["index"])
    if index >= len(value):
        raise _error(trace, path, f"index {index} out of range; {spec.kind}.{match['field']} "
                     f"has {len(value)} elements (indexes 0..{len(value) - 1})")
    return value[index]


def _record(trace: Trace, path: str, spec: RecordSpec, key: str | None) -> Any:
    attr = getattr(trace, spec.attr)
    if spec.keyed_by is None:
        if key is not None:
            raise _error(trace, path, f"{spec.kind} appears once and takes no [key]; "
                         f"use {spec.kind}.key")
        return attr
    choices = ", ".join(_key_text(spec, record) for record in attr)
    if key is None:
        raise _error(trace, path, f"{spec.kind} is keyed by {spec.keyed_by}: use "
                     f"{spec.kind}[{spec.keyed_by}].key with {spec.keyed_by} one of {choices}")
    for record in attr:
        if _key_text(spec, record) == key:
            return record
    raise _error(trace, path, f"no {spec.kind} with {spec.keyed_by}={key}; the trace has "
                 f"{spec.keyed_by} {choices}")


def _key_text(spec: RecordSpec, record: Any) -> str:
    assert spec.keyed_by is not None
    return trace_repr(getattr(record, field_name(spec.keyed_by)))


def _error(trace: Trace, path: object, message: str) -> TracePathError:
    shown = shorten(path if isinstance(path, str) else repr(path), 80)
    return TracePathError(trace.path, None, f"unknown value path {shown!r}: {message}")


def all_paths(trace: Trace) -> list[str]:
    """Every whole-value path of ``trace`` in trace order (``CONFIG.name`` … ``REPLAY.bitwise``)."""
    paths: list[str] = []
    for spec in RECORDS:
        if spec.keyed_by is None:
            prefixes = [spec.kind]
        else:
            prefixes = [f"{spec.kind}[{_key_text(spec, r)}]" for r in getattr(trace, spec.attr)]
        for prefix in prefixes:
            paths.extend(f"{prefix}.{key}" for key in spec.key_names())
    return paths
