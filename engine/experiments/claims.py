"""Deciding a lab's claims, once: each experiment's rule applied to the values its results write.

Contract: ``decide_claims(schema, results, rules)`` returns one ``ClaimVerdict`` per claim
``schema`` declares, in its order (``results``: each experiment's result by name, as
`engine.experiments.registry.run_lab` holds them; ``rules``: each claim's rule, as the
experiments register them): the verdict ``rules[key]`` returns for the values of the trace
these results write (resolved by
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
from types import SimpleNamespace
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


#: What a rule reads the trace's values through: a value path → its value.
Get = Callable[[str], Any]
#: A rule: the trace's values (a path resolver) → a verdict word, or one with its values.
Rule = Callable[[Get], "str | Decided"]


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


def decide_claims(schema: TraceSchema, results: Mapping[str, Any],
                  rules: Mapping[str, Rule]) -> tuple[ClaimVerdict, ...]:
    """The verdict of every claim ``schema`` declares, in its order (see the module doc)."""
    declared = [claim.key for claim in schema.claims]
    if missing := [key for key in declared if key not in rules]:
        raise EngineError(f"{schema.trace_id}: no experiment's rule decides claim {missing[0]}")
    if extra := sorted(set(rules) - set(declared)):
        raise EngineError(f"{schema.trace_id}: a rule decides {extra[0]}, which the trace does "
                          "not declare")
    # A first rendering, every claim pending, gives the rules the values the trace will hold;
    # a pending claim names the trace's first value (a once record's), so the trace parses.
    first = schema.records[0]
    assert first.keyed_by is None, "the trace's first record is a once record"
    somewhere = (f"{first.kind}.{first.keys[0].name}",)
    pending = SimpleNamespace(**results, claims=tuple(
        ClaimVerdict(key, "inconclusive", somewhere) for key in declared))
    trace = parse_trace(render_trace(schema, pending), f"<{schema.trace_id} claims>", schema)
    return tuple(ClaimVerdict(key, *dataclasses.astuple(decide(rules[key], trace.resolve)))
                 for key in declared)
