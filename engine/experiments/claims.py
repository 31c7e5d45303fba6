"""Deciding a lab's claims, once: each experiment's rule applied to the values its results write.

Contract: ``decide_claims(schema, results, rules)`` returns ``results`` (a frozen dataclass with
a ``claims`` field) with one ``ClaimVerdict`` per claim ``schema`` declares, in order: the
verdict ``rules[key]`` returns for the values of the trace these results write (resolved by
trace path, so a rule reads exactly what a page shows), and the paths of the values it was
decided from: those the rule names (``Decided``) or else every value it read but lists of
names, which only say what exists (those too when it read nothing else). A rule raises
``MissingArms`` when the grid lacks what it compares; the verdict is then ``inconclusive``,
decided from the lists it read (every arm it looked at would make a record no reader uses).
``rules`` must name exactly the declared claims. The trace records the verdict; nothing
decides it again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import EngineError
from tracefile.claims import ClaimVerdict
from tracefile.parser import parse_trace
from tracefile.schema import TraceSchema
from tracefile.writer import render_trace


@dataclass(frozen=True)
class Decided:
    """A verdict and the paths of the values that decided it, where a rule reads more values
    than decide it (a grid's every arm, to find each architecture's best)."""

    verdict: str
    because: tuple[str, ...]


#: A rule: the trace's values (a path resolver) → a verdict word, or one with its values.
Rule = Callable[[Callable[[str], Any]], "str | Decided"]


class MissingArms(LookupError):
    """The grid lacks an arm a rule compares: the claim is then inconclusive."""


def decide(rule: Rule, get: Callable[[str], Any]) -> Decided:
    """The verdict of ``rule`` over the values ``get`` resolves, and the values it came from."""
    read: list[str] = []
    listed: list[str] = []  # lists of names, which only say what exists

    def reading(path: str) -> Any:
        value = get(path)
        names = isinstance(value, tuple) and value and all(isinstance(v, str) for v in value)
        (listed if names else read).append(path)
        return value

    try:
        decided = rule(reading)
    except MissingArms:  # decided by the lists of what exists, which lack what it compares
        return Decided("inconclusive", tuple(dict.fromkeys(listed or read)))
    if isinstance(decided, Decided):
        return decided
    return Decided(decided, tuple(dict.fromkeys(read or listed)))


def decide_claims(schema: TraceSchema, results: Any, rules: Mapping[str, Rule]) -> Any:
    """``results`` with its ``claims`` decided (see the module docstring)."""
    declared = [claim.key for claim in schema.claims]
    if list(rules) != declared:
        raise EngineError(f"{schema.trace_id}: rules for {', '.join(rules)}; the trace declares "
                          f"{', '.join(declared)}")
    # A first rendering, every claim pending, gives the rules the values the trace will hold;
    # a pending claim names the trace's first value (a once record's), so the trace parses.
    first = schema.records[0]
    assert first.keyed_by is None, "the trace's first record is a once record"
    somewhere = (f"{first.kind}.{first.keys[0].name}",)
    pending = dataclasses.replace(results, claims=tuple(
        ClaimVerdict(key, "inconclusive", somewhere) for key in declared))
    trace = parse_trace(render_trace(schema, pending), f"<{schema.trace_id} claims>", schema)
    return dataclasses.replace(results, claims=tuple(
        ClaimVerdict(key, *dataclasses.astuple(decide(rule, trace.resolve)))
        for key, rule in rules.items()))
