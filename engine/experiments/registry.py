"""The one list of the labs' experiments: each module registers what it is, beside its code.

Contract: an `Experiment` names the trace it writes into (``trace``, e.g. ``gradient-flow``),
its ``name`` (its field in the results: the first part of its records' ``source`` paths, and
with dashes the name ``python -m engine run`` knows), its configuration class ``config``
(called with no arguments for the default; None for an experiment without settings),
``run(seed, config, **needs)`` → its result, where ``needs`` names experiments of the same
trace whose results it reads (and ``progress``: the run's progress stream), and ``rules``:
the claims it decides, each key with its rule (`engine.experiments.claims.Rule`). A module
registers its experiments when it is imported (`register`); before running a trace the
registry imports every module of the package that produces it, so a new experiment is a new
module and nothing else. `run_lab(schema, seed, configs)` runs a trace's experiments in the
order of their records (`in_trace_order`, which holds the registry to the trace's
declaration), each with ``configs[its config class]`` when given, else the default, and
returns their results by name (`LabResults`) with every claim decided by its experiment's
rule (`decide_claims`).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from engine.errors import EngineError
from engine.experiments.claims import Rule, decide_claims
from tracefile.schema import TraceSchema


@dataclass(frozen=True)
class Experiment:
    """One experiment of a lab (see the module doc)."""

    trace: str
    name: str
    config: type | None
    run: Callable[..., Any]
    needs: tuple[str, ...] = ()
    rules: Mapping[str, Rule] = field(default_factory=dict)


_REGISTERED: dict[str, dict[str, Experiment]] = {}


def register(experiment: Experiment) -> Experiment:
    """Add ``experiment`` to its trace's list (a name registered twice is an error)."""
    lab = _REGISTERED.setdefault(experiment.trace, {})
    if experiment.name in lab:
        raise EngineError(f"{experiment.trace}: experiment {experiment.name} is registered twice")
    lab[experiment.name] = experiment
    return experiment


def experiments(trace: str) -> tuple[Experiment, ...]:
    """The experiments of trace ``trace`` (a name, without version), in registration order."""
    return tuple(_REGISTERED.get(trace, {}).values())


class LabResults(Mapping[str, Any]):
    """A lab's results by experiment name, also as attributes (what ``source`` paths read)."""

    def __init__(self, results: Mapping[str, Any]) -> None:
        self._results = dict(results)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_results"][name]
        except KeyError:
            raise AttributeError(f"the lab's results hold no {name}") from None

    def __getitem__(self, name: str) -> Any:
        return self._results[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)


def run_lab(schema: TraceSchema, seed: int, configs: Mapping[type, Any] | None = None,
            progress: TextIO | None = None) -> LabResults:
    """Every experiment of ``schema``'s trace, run and its claims decided (see the module doc)."""
    stream = sys.stderr if progress is None else progress
    lab = in_trace_order(schema)
    results: dict[str, Any] = {}
    start = time.perf_counter()
    for number, experiment in enumerate(lab, 1):
        print(f"{schema.name} [{number}/{len(lab)}] {experiment.name.replace('_', ' ')} "
              f"({time.perf_counter() - start:.1f} s elapsed)", file=stream, flush=True)
        given = (configs or {}).get(experiment.config)
        config = given or (experiment.config() if experiment.config is not None else None)
        needed = {n: stream if n == "progress" else results[n] for n in experiment.needs}
        results[experiment.name] = experiment.run(seed, config, **needed)
    rules = {key: rule for experiment in lab for key, rule in experiment.rules.items()}
    return LabResults({**results, "claims": decide_claims(schema, results, rules)})


def lab_rules(schema: TraceSchema) -> dict[str, Rule]:
    """Each claim of ``schema``'s trace with the rule its experiment registered, in the order
    the trace declares them."""
    rules = {key: rule for experiment in in_trace_order(schema)
             for key, rule in experiment.rules.items()}
    return {claim.key: rules[claim.key] for claim in schema.claims if claim.key in rules}


def in_trace_order(schema: TraceSchema) -> tuple[Experiment, ...]:
    """The trace's registered experiments in the order its records come; every experiment the
    trace declares must be registered, and every registered one must write records."""
    _import_lab(schema)
    registered = {e.name.replace("_", "-"): e for e in experiments(schema.name)}
    declared = [name for name in schema.experiments if name != "claims"]
    if set(registered) != set(declared):
        missing = sorted(set(declared) - set(registered))
        raise EngineError(f"{schema.trace_id}: " + (
            f"no experiment registers {missing[0]}" if missing else
            f"experiment {sorted(set(registered) - set(declared))[0]} writes no record"))
    lab = tuple(registered[name] for name in declared)
    for index, experiment in enumerate(lab):
        if late := [n for n in experiment.needs if n != "progress"
                    and n not in {e.name for e in lab[:index]}]:
            raise EngineError(f"{schema.trace_id}: {experiment.name} needs {late[0]}, whose "
                              "records come after its own")
    return lab


def _import_lab(schema: TraceSchema) -> None:
    """Import every module of the package that produces ``schema``'s trace, so that each
    registers its experiments (a new experiment is a new module, and nothing else)."""
    package = importlib.import_module(schema.producer.partition(":")[0])
    for module in pkgutil.iter_modules(getattr(package, "__path__", [])):
        importlib.import_module(f"{package.__name__}.{module.name}")
