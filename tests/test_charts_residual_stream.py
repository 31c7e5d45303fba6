"""The decoder lab's charts (diagrams/charts_residual_stream.py): every one renders from the
golden residual-stream-v4 trace, its texts hold no digits, its values table holds only traced
spans, positions counted from zero start at the embedding, and lines drawn on top of each
other are found and said (diagrams.charts.drawn_together)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from paths import RECORDS_DIR

from diagrams import charts, charts_residual_stream
from diagrams.chart_spec import POSITIONS, Line
from diagrams.charts import (
    CHARTS,
    chart_names,
    drawn_together,
    plot_of,
    render_chart,
    together_sentence,
    values_table,
)
from diagrams.errors import RenderError
from diagrams.format import number_tokens
from tracefile import SCHEMAS, Trace, load_trace

NAMES = [chart.name for chart in charts_residual_stream.CHARTS]


@pytest.fixture(scope="module")
def trace() -> Trace:
    return load_trace(RECORDS_DIR / "residual-stream-v4.trace", SCHEMAS["residual-stream-v4"])


def test_the_lab_charts_are_registered_under_their_own_names() -> None:
    assert len(set(NAMES)) == len(NAMES) and all(name.startswith("rs-") for name in NAMES)
    assert all(CHARTS[name] is chart for name, chart in zip(NAMES, charts_residual_stream.CHARTS,
                                                            strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_every_chart_renders_from_the_golden_trace(trace: Trace, name: str) -> None:
    svg = render_chart(name, trace)
    assert svg.startswith("<svg") and f'data-diagram="{name}"' in svg
    assert svg == render_chart(name, trace), "rendering must be deterministic"
    assert "#000000" not in svg and "<metadata" not in svg
    assert name in chart_names(trace)


def test_a_chart_of_its_own_size_is_drawn_at_that_size_and_its_phone_rendering_narrower(
        trace: Trace) -> None:
    # The lab's charts name a size narrower than the default. A size handed to the plot by
    # position once landed on its ``narrow`` flag: the wide rendering was the phone one.
    name = NAMES[0]
    plot = plot_of(name, trace)
    assert CHARTS[name].size is not None
    assert (plot.size, plot.narrow) == (CHARTS[name].size, False)
    wide, narrow = (re.search(r'viewBox="0 0 ([0-9.]+) ', render_chart(n, trace))
                    for n in (name, f"{name}-narrow"))
    assert wide and narrow and float(narrow.group(1)) < float(wide.group(1))


def test_a_declaration_the_plot_refuses_names_the_file_that_declares_it(
        trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    name = NAMES[0]
    monkeypatch.setitem(CHARTS, name, replace(CHARTS[name], size=(48.0, 3.4)))
    for drawn in (name, f"{name}-narrow"):
        with pytest.raises(RenderError) as caught:
            render_chart(drawn, trace)
        assert str(caught.value) == (f"diagrams/charts_residual_stream.py: chart {name!r}: a "
                                     "plot's size is a width and a height in inches")


@pytest.mark.parametrize("name", NAMES)
def test_chart_texts_hold_no_digits(name: str) -> None:
    chart = CHARTS[name]
    texts = [chart.title, chart.desc, chart.xlabel, chart.ylabel,
             *(line.label for line in chart.lines)]
    assert [t for t in texts if number_tokens(t)] == []


@pytest.mark.parametrize("name", NAMES)
def test_every_plotted_value_is_a_traced_span(trace: Trace, name: str) -> None:
    table = str(values_table(name, trace))
    outside = re.sub(r"<(span|td) class=\"tv\"[^>]*>[^<]*</\1>", "", table)
    assert number_tokens(re.sub(r"<[^>]*>", " ", outside)) == []
    plot = plot_of(name, trace)
    spans = table.count('class="tv"')
    assert spans >= sum(len(series.y) for series in plot.series)


def test_positions_from_zero_start_at_the_embedding(trace: Trace) -> None:
    plot = plot_of("rs-stream-norms", trace)
    stream, attention, _ = plot.series
    depth = trace.resolve("STREAM.depth")
    assert stream.x == tuple(float(k) for k in range(depth + 1))
    assert attention.x == tuple(float(k) for k in range(1, depth + 1))
    assert stream.y == trace.resolve("STREAM.stream-norm")
    table = str(values_table("rs-stream-norms", trace))
    # Lines whose positions start differently keep rows of their own: the embedding's row is
    # named zero and holds only the stream's norm.
    assert '<th scope="row">zero</th>' in table
    assert table.count('<th scope="row">eight</th>') == 3


def test_lines_from_the_same_position_share_rows(trace: Trace) -> None:
    chart = CHARTS["rs-logit-lens"]
    assert all(line.x is POSITIONS and line.first == 0 for line in chart.lines)
    table = str(values_table("rs-logit-lens", trace))
    assert table.count("<tr>") == 1 + len(trace.resolve("LENS.residual"))


def test_training_curves_share_their_evaluation_steps(trace: Trace) -> None:
    steps = {record.eval_steps for record in trace.training}
    assert len(steps) == 1
    table = str(values_table("rs-training-residual", trace))
    # the head, one row per step, one per yardstick (the table's foot)
    assert table.count("<tr>") == 1 + len(steps.pop()) + 3
    assert table.count('<tr><th scope="row">') == len(trace.training[0].eval_steps) + 3


def test_a_zero_on_the_log_axis_stays_in_the_values_table(trace: Trace) -> None:
    table = str(values_table("rs-quantization", trace))
    assert 'data-trace="residual-stream-v4:QUANTIZATION[residual-eight-bit].stream-error[0]"' \
        in table


def _with_lines(monkeypatch: pytest.MonkeyPatch, name: str, *lines: Line) -> None:
    monkeypatch.setitem(CHARTS, name, replace(CHARTS[name], lines=lines))


def test_lines_drawn_on_top_of_each_other_are_named_and_said(
        trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    # The orthogonal and well-scaled random shortcuts differ by a third of a hundredth of the
    # log axis's decades: one line hides the other, and the caption's sentence says so.
    assert drawn_together("rs-projection", trace) == [("orthogonal", "random, well scaled")]
    assert together_sentence("rs-projection", trace) == (
        "The lines ‘orthogonal’ and ‘random, well scaled’ lie within a line's width of each "
        "other at every point, so they are drawn on top of each other.")
    # Lines told apart at one point are not together; a line drawn twice is, groups of three
    # are named once, and a chart whose lines all differ adds no sentence.
    assert drawn_together("rs-cosine", trace) == [] and together_sentence("rs-cosine", trace) == ""
    same = "SHORTCUT[identity].gradient"
    _with_lines(monkeypatch, "rs-projection",
                *(Line(label, POSITIONS, path, first=0) for label, path in (
                    ("a", same), ("b", "SHORTCUT[badly-scaled].gradient"), ("c", same),
                    ("d", same))))
    assert drawn_together("rs-projection", trace) == [("a", "c", "d")]
    assert "‘a’, ‘c’ and ‘d’" in together_sentence("rs-projection", trace)


def test_lines_are_together_only_within_the_reach_of_a_line(
        trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pruning rules' losses differ at one count by under half a hundredth of the axis:
    # together at the line's width, apart at a tenth of it.
    assert len(drawn_together("rs-pruning", trace)) == 1
    monkeypatch.setattr(charts, "TOGETHER", charts.TOGETHER / 10)
    assert drawn_together("rs-pruning", trace) == []


def test_lines_at_other_x_values_are_never_together(
        trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    same = "SHORTCUT[identity].gradient"
    _with_lines(monkeypatch, "rs-projection", Line("from zero", POSITIONS, same, first=0),
                Line("from one", POSITIONS, same), Line("longer", POSITIONS, "PRUNING.angular"))
    assert drawn_together("rs-projection", trace) == []
