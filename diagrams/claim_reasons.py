"""What decided a verdict, for a page: the values a lab's CLAIM record names as its reason.

Contract: ``decided_by(traces, key, fmt)`` is a `Reason` for each value path of the default
trace's ``CLAIM[key].because``, in order, each a row of a table: ``run`` names the record it
belongs to in words (the record spec's ``label`` with each ``{key}`` shown as that traced
value; else the name of its key and the key, "threshold 0.15"; else, for a once record, the
record's doc), ``what`` is what the value is (its
key's doc) and ``value`` the value as ``diagrams.format.traced_range`` shows it in ``fmt`` (a
value per seed by its two ends; a loss that overflowed reads "diverged").
"""

from __future__ import annotations

import re
from typing import NamedTuple

from markupsafe import Markup

from diagrams.format import traced, traced_range
from tracefile import TraceSet
from tracefile.values import PATH_RE


class Reason(NamedTuple):
    """One value a verdict was decided from: the run it belongs to, what it is, the value."""

    run: Markup
    what: str
    value: Markup


def decided_by(traces: TraceSet, key: str, fmt: str) -> list[Reason]:
    """The values ``CLAIM[key]`` was decided from, each named and traced."""
    return [_reason(traces, path, fmt) for path in traces.resolve(f"CLAIM[{key}].because")]


def _reason(traces: TraceSet, path: str, fmt: str) -> Reason:
    parts = PATH_RE.fullmatch(path)
    assert parts is not None, path  # the parser accepted only value paths
    trace = traces.traces[traces.default]
    spec = trace.schema.specs[parts["kind"]]
    record = f"{parts['kind']}[{parts['key']}]" if parts["key"] else parts["kind"]
    if spec.label:
        run = _label(traces, record, spec.label, fmt)
    elif spec.keyed_by:
        run = Markup("{} {}").format(spec.keyed_by, traced(traces, f"{record}.{spec.keyed_by}",
                                                            fmt))
    else:
        run = Markup.escape(spec.doc or "")
    return Reason(run, spec.by_name[parts["field"]].doc, traced_range(traces, path, fmt))


def _label(traces: TraceSet, record: str, label: str, fmt: str) -> Markup:
    pieces = re.split(r"\{([^{}]*)\}", label)  # words, key, words, key, ..., words
    return Markup("").join(traced(traces, f"{record}.{piece}", fmt) if i % 2 else piece
                           for i, piece in enumerate(pieces))
