"""Tests for engine/experiments/registry.py: each experiment registers itself, a trace's
experiments run in the order of its records with the configurations given by class, and the
registry is held to the trace's declaration (every declared experiment registered, every
registered one writing records, none reading another whose records come later)."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from engine.errors import EngineError
from engine.experiments import registry
from engine.experiments.registry import Experiment, LabResults, in_trace_order, register, run_lab
from tracefile.claims import Claim
from tracefile.schema import Key, RecordSpec, TraceSchema
from tracefile.schemas import SCHEMAS


@dataclass(frozen=True)
class Count:
    n: int = 2


def schema(name: str) -> TraceSchema:
    """A two-experiment trace: ``first`` writes FIRST, ``second`` SECOND, one claim."""
    return TraceSchema(name, 1, (
        RecordSpec("FIRST", (Key("n", "int"),), "first"),
        RecordSpec("SECOND", (Key("n", "int"),), "second"),
        RecordSpec("CLAIM", (Key("key", "name"), Key("verdict", "name"),
                             Key("because", "paths")), "claims", keyed_by="key"),
    ), "engine.experiments.registry:run_lab", claims=(
        Claim("doubled", "The second doubles the first", "x", "Supports when it does."),))


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh registry holding one test trace's name."""
    monkeypatch.setattr(registry, "_REGISTERED", {})
    return "test-lab"


def doubled(get):  # type: ignore[no-untyped-def]
    return "supports" if get("SECOND.n") == 2 * get("FIRST.n") else "contradicts"


def test_a_lab_runs_in_the_order_of_its_records_with_configs_by_class(lab: str) -> None:
    # registered in the other order: the trace's record order decides
    register(Experiment(lab, "second", None, lambda seed, config, first, progress: (
        print("second ran", file=progress), Count(2 * first.n))[1], needs=("first", "progress"),
        rules={"doubled": doubled}))
    register(Experiment(lab, "first", Count, lambda seed, config: Count(config.n + seed)))
    stream = io.StringIO()
    results = run_lab(schema(lab), 1, {Count: Count(5)}, stream)
    assert isinstance(results, LabResults)
    assert (results.first, results["second"]) == (Count(6), Count(12))
    assert [c.verdict for c in results.claims] == ["supports"]
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("test-lab [1/2] first (") and lines[2] == "second ran"
    assert run_lab(schema(lab), 0, progress=io.StringIO()).first == Count(2)  # the default


def test_the_registry_is_held_to_the_trace(lab: str) -> None:
    with pytest.raises(EngineError, match=r"^test-lab-v1: no experiment registers first$"):
        in_trace_order(schema(lab))
    register(Experiment(lab, "first", None, lambda seed, config: Count(), needs=("second",)))
    register(Experiment(lab, "second", None, lambda seed, config: Count()))
    with pytest.raises(EngineError, match=r"^test-lab-v1: first needs second, whose records "
                                          r"come after its own$"):
        in_trace_order(schema(lab))
    register(Experiment(lab, "third", None, lambda seed, config: Count()))
    with pytest.raises(EngineError, match=r"^test-lab-v1: experiment third writes no record$"):
        in_trace_order(schema(lab))
    with pytest.raises(EngineError, match=r"^test-lab: experiment third is registered twice$"):
        register(Experiment(lab, "third", None, lambda seed, config: Count()))


@pytest.mark.parametrize("trace_id", ["gradient-flow-v4", "residual-stream-v4"])
def test_every_experiment_of_each_lab_registers_itself(trace_id: str) -> None:
    found = in_trace_order(SCHEMAS[trace_id])
    assert [e.name.replace("_", "-") for e in found] == [
        name for name in SCHEMAS[trace_id].experiments if name != "claims"]
    rules = {key for e in found for key in e.rules}
    assert rules == {claim.key for claim in SCHEMAS[trace_id].claims}
