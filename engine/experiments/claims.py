"""Deciding a lab's claims, once: each experiment's rule applied to the values its results write.

Contract: ``decide_claims(schema, results, rules)`` returns ``results`` (a frozen dataclass with
a ``claims`` field) with one ``ClaimVerdict`` per claim ``schema`` declares, in order: the
verdict ``rules[key]`` returns for the values of the trace these results write (resolved by
trace path, so a rule reads exactly what a page shows). A rule raises ``MissingArms`` when the
grid lacks what it compares; the verdict is then ``inconclusive``. ``rules`` must name exactly
the declared claims. The trace records the verdict; nothing decides it again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from engine.errors import EngineError
from tracefile.claims import ClaimVerdict
from tracefile.parser import parse_trace
from tracefile.schema import TraceSchema
from tracefile.writer import render_trace

#: A rule: the trace's values (a path resolver) → a verdict word.
Rule = Callable[[Callable[[str], Any]], str]


class MissingArms(LookupError):
    """The grid lacks an arm a rule compares: the claim is then inconclusive."""


def decide(rule: Rule, get: Callable[[str], Any]) -> str:
    """The verdict of ``rule`` over the values ``get`` resolves."""
    try:
        return rule(get)
    except MissingArms:
        return "inconclusive"


def decide_claims(schema: TraceSchema, results: Any, rules: Mapping[str, Rule]) -> Any:
    """``results`` with its ``claims`` decided (see the module docstring)."""
    declared = [claim.key for claim in schema.claims]
    if list(rules) != declared:
        raise EngineError(f"{schema.trace_id}: rules for {', '.join(rules)}; the trace declares "
                          f"{', '.join(declared)}")
    pending = dataclasses.replace(results, claims=tuple(
        ClaimVerdict(key, "inconclusive") for key in declared))
    trace = parse_trace(render_trace(schema, pending), f"<{schema.trace_id} claims>", schema)
    return dataclasses.replace(results, claims=tuple(
        ClaimVerdict(key, decide(rule, trace.resolve)) for key, rule in rules.items()))
