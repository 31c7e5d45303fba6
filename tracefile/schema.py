"""Record declarations: what a trace holds, declared once for its writer and its reader.

Contract:
- A ``TraceSchema`` names one versioned trace (``residual-connections-v2``) and lists its
  ``RecordSpec``s in file order. Each spec lists its ``Key``s in the order the line writes them,
  with the value kind of each (docs/trace.md, "Values"), its vector-length rule and where the
  engine finds the value (``source``: a dotted attribute path into the experiment's frozen
  results; the site never reads it). The engine's writer (``tracefile.writer``) and the site's
  parser (``tracefile.parser``) both walk these declarations, so a new value is one new ``Key``.
- A keyed record (``keyed_by``) appears once per key value: numeric keys strictly increasing,
  word and name keys unique in the order written; with ``runs_to`` (``"RECORD.key"`` of an
  earlier once-record) its keys are exactly ``0..that``.
- ``Invariant``s state what the values must satisfy among themselves (an output is the sum of
  its parts, a check passed exactly when its error is within tolerance); the parser checks
  them after the grammar, so a well-formed but false trace is rejected too.
- ``Record``s are the parsed values of one line: immutable, compared by kind and values, with
  the grammar's keys as attributes (``-`` becomes ``_``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tracefile.claims import Claim

#: The value kinds of docs/trace.md ("Values").
KINDS = ("int", "float", "vector", "shape", "bool", "name", "names", "word", "paths")
TRACE_ID_RE = re.compile(r"(?P<name>[a-z][a-z0-9]*(?:-[a-z0-9]+)*)-v(?P<version>[1-9][0-9]{0,3})")


def field_name(key: str) -> str:
    """The attribute for a grammar key (``next-chapter`` → ``next_chapter``)."""
    return key.replace("-", "_")


@dataclass(frozen=True)
class Key:
    """One ``key=value`` field: its name, value kind, length rule and engine source.

    ``length`` (vectors only) names the shape the element count must equal: a key of the same
    record (``"shape"``) or ``"RECORD.key"`` of an earlier once-record. ``source`` defaults to
    the key's attribute name on the record's source object. ``doc`` says in words what the
    value is; ``along`` (a list's) what its element at a position is, in words: ``{n}`` is the
    position counted from one, ``{i}`` from zero, and ``{key}`` or ``{RECORD.key}`` the element
    at the same position of that other list (``"depth {SWEEP-CONFIG.depths}"``).
    """

    name: str
    kind: str
    length: str | None = None
    source: str | None = None
    doc: str = ""
    along: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"key {self.name}: unknown value kind {self.kind!r}")

    @property
    def attr(self) -> str:
        return field_name(self.name)

    @property
    def source_path(self) -> str:
        return self.source or self.attr


@dataclass(frozen=True)
class RecordSpec:
    """One record kind: its keys in line order, and how often and where it appears.

    ``source`` is the dotted path, in the experiment's results, of the object holding the keys
    (for a keyed record: of the sequence of such objects, one line each). ``label`` names one
    record in words for a reader, ``{key}`` standing for that key's value (``"{variant},
    {depth} blocks"``); without one a keyed record is named by its key.
    """

    kind: str
    keys: tuple[Key, ...]
    source: str
    keyed_by: str | None = None
    runs_to: str | None = None
    doc: str = ""
    label: str = ""

    def __post_init__(self) -> None:
        names = self.key_names()
        for named in re.findall(r"\{([^{}]*)\}", self.label):
            if named not in names:
                raise ValueError(f"{self.kind}: its label names {named}, which is not one of "
                                 "its keys")
        if len(set(names)) != len(names):
            raise ValueError(f"{self.kind}: duplicate key")
        if self.keyed_by is not None and self.keyed_by not in names:
            raise ValueError(f"{self.kind}: keyed by {self.keyed_by}, which is not one of its keys")
        if self.keyed_by is not None and self.by_name[self.keyed_by].kind not in (
                "int", "float", "word", "name"):
            raise ValueError(f"{self.kind}: a key must be an int, float, word or name")

    @property
    def attr(self) -> str:
        return field_name(self.kind.lower())

    def key_names(self) -> tuple[str, ...]:
        return tuple(key.name for key in self.keys)

    @cached_property
    def by_name(self) -> dict[str, Key]:
        return {key.name: key for key in self.keys}


class Record:
    """The parsed values of one record line (immutable; equal when kind and values are)."""

    __slots__ = ("_kind", "_values")

    def __init__(self, kind: str, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_values", dict(values))

    @property
    def kind(self) -> str:
        return self._kind

    def __getattr__(self, attr: str) -> Any:
        try:
            return self._values[attr]
        except KeyError:
            raise AttributeError(f"{self._kind} has no key {attr}") from None

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError(f"{self._kind} records are immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self._kind, self._values) == (other._kind, other._values)

    def __hash__(self) -> int:
        return hash((self._kind, tuple(self._values.items())))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{self._kind}({fields})"

    def values(self) -> dict[str, Any]:
        """The values by attribute name, in line order."""
        return dict(self._values)

    def value(self, attr: str) -> Any:
        """One value by attribute name, also for a key that attribute access cannot reach
        (a key named ``kind`` reads as the record's kind)."""
        try:
            return self._values[attr]
        except KeyError:
            raise AttributeError(f"{self._kind} has no key {attr}") from None


@dataclass(frozen=True)
class Invariant:
    """A rule a trace's values must obey, checked after parsing (a trace must agree with
    itself, not only with the grammar).

    ``sides(value)`` receives the resolver of value paths and returns the two sides that must
    be equal (exactly: the engine computed both with the same float64 operations); ``record``
    is the record whose line a violation is reported at (``KIND`` or ``KIND[key]``).
    """

    text: str
    record: str
    sides: Callable[[Callable[[str], Any]], tuple[Any, Any]]


@dataclass(frozen=True)
class TraceSchema:
    """A versioned trace: its name, version, records in file order and what it is for.

    ``producer`` names the engine function whose results the trace holds, as
    ``"module:function"`` (a string: this package never imports the engine).
    """

    name: str
    version: int
    records: tuple[RecordSpec, ...]
    producer: str
    title: str = ""
    doc: str = ""
    invariants: tuple[Invariant, ...] = ()
    #: The claims its experiments decide (``tracefile.claims``), in the order pages list them.
    claims: tuple[Claim, ...] = ()
    specs: dict[str, RecordSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not TRACE_ID_RE.fullmatch(self.trace_id):
            raise ValueError(f"{self.trace_id!r} is not a trace id (<name>-v<N>)")
        specs = {spec.kind: spec for spec in self.records}
        if len(specs) != len(self.records):
            raise ValueError(f"{self.trace_id}: a record kind is declared twice")
        object.__setattr__(self, "specs", specs)
        if ":" not in self.producer:
            raise ValueError(f"{self.trace_id}: producer must be 'module:function'")

    @property
    def trace_id(self) -> str:
        return f"{self.name}-v{self.version}"

    @property
    def header(self) -> str:
        return f"TRACE {self.trace_id} BEGIN"

    @property
    def footer(self) -> str:
        return f"TRACE {self.trace_id} END"

    @property
    def file_name(self) -> str:
        return f"{self.trace_id}.trace"

    def kind_list(self) -> str:
        return ", ".join(spec.kind for spec in self.records)

    @property
    def experiments(self) -> dict[str, tuple[RecordSpec, ...]]:
        """The records of each experiment, by the name ``python -m engine run`` knows it: the
        first part of a record's ``source`` ("ten_layers.runs": ``ten-layers``), in order."""
        found: dict[str, list[RecordSpec]] = {}
        for spec in self.records:
            found.setdefault(spec.source.split(".")[0].replace("_", "-"), []).append(spec)
        return {name: tuple(specs) for name, specs in found.items() if name}
