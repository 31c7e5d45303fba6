"""Value paths into parsed traces (docs/trace.md, "Addressing a value").

Contract: a value path is ``RECORD.key`` or ``RECORD[key-value].key``, optionally followed by
an element index ``[i]`` and optionally qualified by the trace it belongs to
(``gradient-flow-v4:HIGHWAY.plain``). A keyed record's key value is matched as the trace writes
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
from tracefile.values import MAX_PATH, PATH_RE, trace_repr

SYNTAX = "[TRACE-ID:]RECORD.key or [TRACE-ID:]RECORD[key-value].key, optionally followed by [index]"
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

    def describe(self, path: str) -> str:
        """What the value ``path`` names is, in words, from the schema's docs: the key's doc,
        the element's (its key's ``along``, else its position), then the record's doc and
        which record. Raises TracePathError as ``resolve`` does."""
        self.resolve(path)
        match = split_path(path)
        assert match is not None
        spec = self.schema.specs[match["kind"]]
        key = spec.by_name[match["field"]]
        record = self.record(path, spec, match["key"])
        said = [_sentence(key.doc or key.name)]
        if match["index"] is not None:
            index, count = int(match["index"]), len(record.value(key.attr))
            element = _ALONG.sub(lambda name: trace_repr(self.along(path, record, name[1], index)),
                                 key.along.replace("{n}", str(index + 1)).replace(
                                     "{i}", str(index))) if key.along else ""
            said.append(_sentence(f"{element} ({index + 1} of {count})" if element
                                  else f"item {index + 1} of {count}"))
        which = f" ({spec.keyed_by} {match['key']})" if spec.keyed_by else ""
        said.append(_sentence((spec.doc or spec.kind) + which))
        return " ".join(said)

    def along(self, path: str, record: Record, name: str, index: int) -> Any:
        """The element at ``index`` of the list ``name`` (a key of ``record``, or
        ``RECORD.key`` of a once-record) names."""
        kind, _, field = name.rpartition(".")
        owner = self.once[kind] if kind else record
        spec = self.schema.specs[owner.kind]
        return self.element(path, spec, field, owner.value(spec.by_name[field].attr), index)

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


#: A list named in a key's ``along`` words.
_ALONG = re.compile(r"\{((?:[A-Z][A-Z-]*\.)?[a-z][a-z-]*)\}")


def _sentence(words: str) -> str:
    """``words`` with a full stop, and a capital first letter when they open with a word (not
    a symbol such as ``y`` or ``x's``)."""
    words = words.strip()
    if re.match(r"[a-z]{2}", words):
        words = words[0].upper() + words[1:]
    return words + ("" if words.endswith((".", "?", "!")) else ".")


def all_paths(schema: TraceSchema, records: Iterable[tuple[RecordSpec, Record]]) -> list[str]:
    """Every whole-value path, unqualified, in trace order (``CONFIG.name`` … last key)."""
    paths: list[str] = []
    for spec, record in records:
        prefix = spec.kind if spec.keyed_by is None else f"{spec.kind}[{key_text(spec, record)}]"
        paths.extend(f"{prefix}.{key}" for key in spec.key_names())
    return paths
