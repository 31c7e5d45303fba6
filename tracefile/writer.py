"""The one trace writer: an experiment's frozen results → trace text, by its declaration.

Contract: ``render_trace(schema, results)`` walks ``schema.records`` in order; for each record it
takes the object at the record's ``source`` path in ``results`` (for a keyed record, the
sequence of such objects), writes each key's value from the key's ``source`` path with
``tracefile.values.write_value`` and joins header, records and footer with ``\\n`` and a final
newline. The text is then parsed back with the same schema, so nothing the site would reject
(a wrong vector length, keys out of order, a missing run) is ever written: any problem raises
``TraceWriteError`` naming the record and key. Same results, same bytes.
"""

from __future__ import annotations

from collections.abc import Collection
from types import SimpleNamespace
from typing import Any

from tracefile.errors import TraceError, TraceWriteError
from tracefile.parser import parse_trace
from tracefile.schema import RecordSpec, TraceSchema
from tracefile.values import ValueProblem, write_value


def lookup(obj: Any, path: str) -> Any:
    """The attribute at dotted ``path`` of ``obj`` (``""`` is ``obj`` itself)."""
    for part in path.split(".") if path else ():
        obj = getattr(obj, part)
    return obj


def record_lines(spec: RecordSpec, results: Any) -> list[str]:
    """The lines of one record kind (one per item for a keyed record)."""
    held = lookup(results, spec.source)
    lines = []
    for item in held if spec.keyed_by else (held,):
        fields = [spec.kind]
        for key in spec.keys:
            try:
                fields.append(f"{key.name}={write_value(key.kind, lookup(item, key.source_path))}")
            except ValueProblem as problem:
                raise TraceWriteError(f"{spec.kind}.{key.name}: {problem.problem} "
                                      f"(expected {problem.expected})") from None
        lines.append(" ".join(fields))
    return lines


def experiment_lines(schema: TraceSchema, name: str, result: Any,
                     kinds: Collection[str] = ()) -> str:
    """The trace lines experiment ``name`` writes (a key of ``schema.experiments``), from that
    experiment's own result, each ending in a newline; ``kinds`` keeps only those records.
    What a lab's notebook prints, to be set beside the published trace."""
    specs = schema.experiments.get(name)
    if specs is None:
        raise TraceWriteError(f"{schema.trace_id} has no experiment {name!r} (it has: "
                              f"{', '.join(schema.experiments)})")
    if unknown := set(kinds) - {spec.kind for spec in specs}:
        raise TraceWriteError(f"experiment {name} writes no {sorted(unknown)[0]} record (it "
                              f"writes {', '.join(spec.kind for spec in specs)})")
    holder = SimpleNamespace(**{specs[0].source.split(".")[0]: result})
    return "".join(f"{line}\n" for spec in specs if not kinds or spec.kind in kinds
                   for line in record_lines(spec, holder))


def render_trace(schema: TraceSchema, results: Any) -> str:
    """The complete trace text of ``results`` under ``schema``; raises TraceWriteError."""
    lines = [schema.header]
    for spec in schema.records:
        lines.extend(record_lines(spec, results))
    lines.append(schema.footer)
    text = "\n".join(lines) + "\n"
    try:
        parse_trace(text, f"<{schema.trace_id} writer>", schema)
    except TraceError as error:
        raise TraceWriteError(f"the written trace breaks its own grammar: {error}") from None
    return text

