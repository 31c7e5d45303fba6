"""The page helpers of ``sitebuild.page_context`` on the recorded traces."""

from __future__ import annotations

from sitebuild.page_context import PROSE_FORMAT, SPREAD_KEYS, spread
from tracefile import TraceSet
from tracefile.values import OVERFLOWED


def clipping_arms(golden_traces: TraceSet) -> tuple[TraceSet, list[tuple[str, int, float]]]:
    """The gradients lab as the default trace, and its best clipping arms: (record, diverged
    seeds, largest final loss)."""
    lab = TraceSet(golden_traces.traces, "gradient-flow-v4")
    records = [f"CLIP-BEST[{stack}]" for stack in lab.resolve("CLIP-CONFIG.stacks")]
    return lab, [(r, lab.resolve(f"{r}.diverged"), lab.resolve(f"{r}.high")) for r in records]


def test_a_spread_names_a_diverged_end_in_words(golden_traces: TraceSet) -> None:
    lab, arms = clipping_arms(golden_traces)
    seeds = len(lab.resolve("CLIP-CONFIG.seeds"))
    some_diverged = [record for record, diverged, _ in arms if 0 < diverged < seeds]
    assert some_diverged, "the recorded clipping runs have an arm with some seeds diverged"
    shown = str(spread(lab, some_diverged[0], PROSE_FORMAT, SPREAD_KEYS))
    assert shown.endswith("–diverged)") and "10³⁰⁸" not in shown
    assert shown.count('class="tv"') == 2  # the middle and the low end stay traced


def test_a_spread_of_finite_ends_traces_all_three(golden_traces: TraceSet) -> None:
    lab, arms = clipping_arms(golden_traces)
    finite = [record for record, diverged, high in arms if not diverged and high < OVERFLOWED]
    shown = str(spread(lab, finite[0], PROSE_FORMAT, SPREAD_KEYS))
    assert shown.count('class="tv"') == 3 and "diverged" not in shown


def test_a_spread_whose_every_seed_diverged_reads_diverged(golden_traces: TraceSet) -> None:
    lab, arms = clipping_arms(golden_traces)
    seeds = len(lab.resolve("CLIP-CONFIG.seeds"))
    every = [record for record, diverged, _ in arms if diverged == seeds]
    assert every, "the recorded clipping runs have an arm whose every seed diverged"
    assert str(spread(lab, every[0], PROSE_FORMAT, SPREAD_KEYS)) == "diverged"
