"""diagrams/claim_reasons.py: the values a verdict was decided from, named and traced, read
from the recorded traces."""

from __future__ import annotations

import re

import pytest
from paths import RECORDS_DIR

from diagrams.claim_reasons import decided_by
from diagrams.format import traced_range
from tracefile import SCHEMAS, TraceSet, load_trace


@pytest.fixture(scope="module")
def labs() -> dict[str, TraceSet]:
    traces = {trace_id: load_trace(RECORDS_DIR / SCHEMAS[trace_id].file_name)
              for trace_id in ("gradient-flow-v4", "residual-stream-v4")}
    return {trace_id: TraceSet(traces, trace_id) for trace_id in traces}


def traced_paths(markup: str) -> list[str]:
    return re.findall(r'data-trace="([^"]+)"', markup)


def test_a_once_records_value_is_named_by_its_key_doc(labs: dict[str, TraceSet]) -> None:
    [reason] = decided_by(labs["residual-stream-v4"], "stream-is-sum", "sig4")
    assert reason.run == "the last state as the embedding plus every block&#39;s write"
    assert reason.what.startswith("adding the writes to the embedding")
    assert traced_paths(reason.value) == ["residual-stream-v4:STREAM.exact-in-order"]


def test_an_arm_is_named_by_its_label_and_its_seeds_shown_as_their_range(
        labs: dict[str, TraceSet]) -> None:
    traces = labs["residual-stream-v4"]
    because = traces.resolve("CLAIM[postnorm-tuned-better].because")
    reasons = decided_by(traces, "postnorm-tuned-better", "sig4")
    assert len(reasons) == len(because) and because[0] == "TRAINING-CONFIG.margin"
    arm = because[1]  # after the margin, the arms it compared
    first = arm.removesuffix(".final-validation")
    finals = traces.resolve(arm)
    low, high = finals.index(min(finals)), finals.index(max(finals))
    assert traced_paths(reasons[1].run) == [f"residual-stream-v4:{first}.{key}" for key in (
        "variant", "norm", "depth", "lr", "warmup")]
    assert traced_paths(reasons[1].value) == [
        f"residual-stream-v4:{arm}[{low}]", f"residual-stream-v4:{arm}[{high}]"]
    assert reasons[1].what == "each seed's final validation loss"


def test_seeds_that_all_overflowed_are_said_in_words(labs: dict[str, TraceSet]) -> None:
    traces = labs["gradient-flow-v4"]
    # The default residual start diverged at every rate at the deepest depth.
    arm = next(name for name in traces.resolve("TRAINING-CONFIG.arm-names")
               if name.startswith("residual-default-32-"))
    shown = str(traced_range(traces, f"ARM[{arm}].final-loss", "sig4"))
    assert shown == "overflowed in every seed"


def test_a_keyed_records_value_is_named_by_its_key(labs: dict[str, TraceSet]) -> None:
    reasons = decided_by(labs["residual-stream-v4"], "early-exit-saves", "sig4")
    keyed = [reason.run for reason in reasons if "EARLY-EXIT[" in reason.run]
    assert keyed and all(run.startswith("threshold <span") for run in keyed)


def test_a_loss_that_overflowed_reads_diverged(labs: dict[str, TraceSet]) -> None:
    reasons = decided_by(labs["gradient-flow-v4"], "clipping-tames-explosion", "sig4")
    # The unclipped 32-block stack diverged in every seed at every rate.
    assert "diverged" in [str(reason.value) for reason in reasons]
    assert not any("10³⁰⁸" in str(reason.value) for reason in reasons)
