"""A parsed trace: its records by attribute, resolved by value path through one index.

Contract: ``Trace`` holds one ``Record`` per once-record and a tuple per keyed record (in key
order) as attributes named after the record kind (``trace.stack_config``), the trace's text,
the path it came from and its ``TraceSchema``. ``resolve(path)`` goes through a ``PathIndex``
built on first use, so each lookup is O(1) whatever the trace's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracefile.errors import TracePathError
from tracefile.schema import Record, RecordSpec, TraceSchema
from tracefile.value_paths import PathIndex, all_paths, split_path


class Trace:
    """A parsed trace: its records by attribute, its text, where it came from, its schema."""

    __slots__ = ("_index", "_records", "path", "schema", "text")

    def __init__(self, schema: TraceSchema, records: dict[str, Any], text: str,
                 path: str) -> None:
        self.schema = schema
        self._records = records
        self.text = text
        self.path = path
        self._index: Any = None

    @property
    def trace_id(self) -> str:
        return self.schema.trace_id

    def __getattr__(self, attr: str) -> Any:
        try:
            return self._records[attr]
        except KeyError:
            raise AttributeError(f"{self.schema.trace_id} has no record {attr!r}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return (self.schema.trace_id, self._records, self.text, self.path) == (
            other.schema.trace_id, other._records, other.text, other.path)

    __hash__ = None  # type: ignore[assignment]  # equal traces need not be one object

    def records(self) -> Iterator[tuple[RecordSpec, Record]]:
        """Every record in file order, with its spec."""
        for spec in self.schema.records:
            held = self._records[spec.attr]
            for record in held if spec.keyed_by else (held,):
                yield spec, record

    def resolve(self, path: str) -> Any:
        """The typed value a value path names (docs/trace.md, "Addressing a value").

        Raises ``TracePathError`` naming the path and the records or keys that do exist. The
        lookup goes through an index built once per trace, so each path costs O(1).
        """
        if self._index is None:
            self._index = PathIndex(self.schema, self.records(), self.path)
        return self._index.resolve(path)

    def describe(self, path: str) -> str:
        """What the value ``path`` names is, in words (``PathIndex.describe``)."""
        self.resolve(path)  # builds the index
        assert self._index is not None
        return self._index.describe(path)

    def qualified(self, path: str) -> str:
        """``path`` with this trace's id in front (what a provenance attribute carries)."""
        match = split_path(path)
        local = path[len(match["trace"]) + 1 :] if match and match["trace"] else path
        return f"{self.trace_id}:{local}"

    def all_paths(self) -> list[str]:
        """Every whole-value path of this trace, unqualified, in trace order."""
        return all_paths(self.schema, self.records())


class TraceSet:
    """The traces one site shows, by id, and the one unqualified paths refer to.

    ``resolve("gradient-flow-v4:HIGHWAY.plain")`` looks in that trace; ``resolve("FORWARD.input")``
    in the default one. ``qualified(path)`` is the path with its trace id made explicit, which is
    what a provenance attribute carries.
    """

    def __init__(self, traces: dict[str, Trace], default: str) -> None:
        if default not in traces:
            raise ValueError(f"default trace {default!r} is not among {sorted(traces)}")
        self.traces = dict(traces)
        self.default = default

    def __iter__(self) -> Iterator[Trace]:
        return iter(self.traces.values())

    def split(self, path: str) -> tuple[Trace, str]:
        """The trace a path refers to and the path without its qualifier."""
        match = split_path(path)
        if match is None or match["trace"] is None:
            return self.traces[self.default], path
        trace = self.traces.get(match["trace"])
        if trace is None:
            raise TracePathError("<site>", None, f"unknown value path {path!r}: no trace "
                                 f"{match['trace']}; the site has {', '.join(self.traces)}")
        return trace, path[len(match["trace"]) + 1 :]

    def resolve(self, path: str) -> Any:
        trace, local = self.split(path)
        return trace.resolve(local)

    def describe(self, path: str) -> str:
        trace, local = self.split(path)
        return trace.describe(local)

    def qualified(self, path: str) -> str:
        trace, local = self.split(path)
        return f"{trace.trace_id}:{local}"
