"""What decided a verdict, for a page: the values a lab's CLAIM record names as its reason.

Contract: ``decided_by(traces, key, fmt)`` is a Markup item for each value path of the
default trace's ``CLAIM[key].because``, in order, naming the record it belongs to in words
(the record spec's ``label`` with each ``{key}`` shown as that traced value; else the
record's key; nothing for a once record), what the value is (its key's doc) and the value
as ``diagrams.format.traced_range`` shows it in ``fmt`` (a value per seed by its two ends).
"""

from __future__ import annotations

import re

from markupsafe import Markup

from diagrams.format import traced, traced_range
from tracefile import TraceSet
from tracefile.values import PATH_RE


def decided_by(traces: TraceSet, key: str, fmt: str) -> list[Markup]:
    """The values ``CLAIM[key]`` was decided from, each named and traced."""
    return [_item(traces, path, fmt) for path in traces.resolve(f"CLAIM[{key}].because")]


def _item(traces: TraceSet, path: str, fmt: str) -> Markup:
    parts = PATH_RE.fullmatch(path)
    assert parts is not None, path  # the parser accepted only value paths
    trace = traces.traces[traces.default]
    spec = trace.schema.specs[parts["kind"]]
    record = f"{parts['kind']}[{parts['key']}]" if parts["key"] else parts["kind"]
    what = Markup("{}: {}").format(spec.by_name[parts["field"]].doc,
                                   traced_range(traces, path, fmt))
    if spec.label:
        label = _label(traces, record, spec.label, fmt)
    elif spec.keyed_by:
        label = traced(traces, f"{record}.{spec.keyed_by}", fmt)
    else:
        return what
    return Markup("{}, {}").format(label, what)


def _label(traces: TraceSet, record: str, label: str, fmt: str) -> Markup:
    pieces = re.split(r"\{([^{}]*)\}", label)  # words, key, words, key, ..., words
    return Markup("").join(traced(traces, f"{record}.{piece}", fmt) if i % 2 else piece
                           for i, piece in enumerate(pieces))
