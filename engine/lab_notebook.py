"""What a lab's notebook calls beside the engine: a run held against the trace the lab page was
built from, and a learner's prediction held against what the engine measures.

Contract: ``same_as_trace(trace_id, name, result, kinds=())`` writes experiment ``name``'s record
lines from ``result`` (as the engine's writer does, ``kinds`` keeping only those records) and
holds each against its line in ``records/<trace>.trace``: it prints one short line when every
line is there, bit for bit (and there is one at least), and otherwise raises ``AssertionError``
naming the first line that differs beside the trace's own line of that record.
``check(prediction, measured, hint)`` prints whether a prediction matches a measured value (a
number to a float's rounding, a relative difference under ``TOLERANCE``; a word exactly), and
when it does not, the measured value and ``hint`` (a prediction not yet written, ``...``,
asks for one). It returns nothing, so that a check cell shows only its words.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from engine.records import RECORDS
from tracefile.schemas import SCHEMAS
from tracefile.values import is_real
from tracefile.writer import experiment_lines

#: How close a prediction must come to a measured value, relative to the larger of the two.
TOLERANCE = 1e-9


def same_as_trace(trace_id: str, name: str, result: Any, kinds: Collection[str] = ()) -> None:
    """Hold ``result``'s record lines against the published trace (see the module doc)."""
    schema = SCHEMAS[trace_id]
    lines = experiment_lines(schema, name, result, kinds).splitlines()
    if not lines:
        raise AssertionError(f"this run wrote no record line of {name} to hold against "
                             f"{trace_id}")
    published = (RECORDS / schema.file_name).read_text(encoding="utf-8").splitlines()
    for line in lines:
        if line not in published:
            kind, first = line.split(" ")[:2]
            same = [row for row in published if row.split(" ")[:1] == [kind]]
            theirs = next((row for row in same if row.split(" ")[1] == first), None) \
                if len(same) > 1 else (same[0] if same else None)
            raise AssertionError(f"this run wrote {line!r}, but {trace_id} holds {theirs!r}")
    said = ("its one record line equals" if len(lines) == 1
            else f"all {len(lines)} record lines of this run equal")
    print(f"{name}: {said} trace {trace_id}'s, bit for bit")


def check(prediction: object, measured: float | str, hint: str) -> None:
    """Whether ``prediction`` matches ``measured`` (see the module doc), said in words."""
    if isinstance(measured, str):  # a word: "grows" or "shrinks"
        if not isinstance(prediction, str):
            print("Write your prediction first, as a word in quotes, then run this cell again.")
            return
        matched = prediction.strip().lower() == measured
        shown = measured
    else:
        if not is_real(prediction):
            print("Write your prediction first, as a number or a formula in Python, then run "
                  "this cell again.")
            return
        matched = math.isclose(prediction, measured, rel_tol=TOLERANCE, abs_tol=0.0)
        shown, prediction = f"{measured:.6g}", f"{prediction:.6g}"
    if matched:
        print(f"Yes: the engine measured {shown}, as you predicted.")
    else:
        print(f"Not quite: the engine measured {shown}, you predicted {prediction}. {hint}")
