"""The lab's charts: positions, columns of records, bands, and their folded values tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagrams import charts_gradient_flow
from diagrams.chart_spec import POSITIONS, Chart, Line, Yardstick
from diagrams.charts import CHARTS, plot_of, render_chart, values_table
from diagrams.errors import RenderError
from diagrams.format import number_tokens
from diagrams.words import number_words
from tracefile import SCHEMAS, Trace, load_trace

GOLDEN = Path(__file__).parents[1] / "records" / "gradient-flow-v4.trace"


@pytest.fixture(scope="module")
def trace() -> Trace:
    return load_trace(GOLDEN, SCHEMAS["gradient-flow-v4"])


@pytest.fixture
def extra_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    chart = Chart("gf-test", "gradient-flow-v4", "A test", "Positions and a band.", "block", "y",
                  (Line("post", POSITIONS, "PLACEMENT[postnorm-12].gradient-mean",
                        "PLACEMENT[postnorm-12].gradient-low",
                        "PLACEMENT[postnorm-12].gradient-high"),), fmt="fixed6")
    monkeypatch.setitem(CHARTS, chart.name, chart)


@pytest.mark.parametrize(("n", "words"), [(0, "zero"), (7, "seven"), (12, "twelve"),
                                          (20, "twenty"), (64, "sixty-four"),
                                          (105, "one hundred and five"),
                                          (1000, "one thousand"),
                                          (2005, "two thousand and five"),
                                          (10_000, "ten thousand"),
                                          (64_512, "sixty-four thousand five hundred and twelve"),
                                          (999_999, "nine hundred and ninety-nine thousand nine "
                                                    "hundred and ninety-nine")])
def test_number_words(n: int, words: str) -> None:
    assert number_words(n) == words


@pytest.mark.parametrize("bad", [-1, 1_000_000, 2.0, True])
def test_number_words_refuses_what_it_cannot_spell(bad: object) -> None:
    with pytest.raises(ValueError):
        number_words(bad)  # type: ignore[arg-type]


def test_every_lab_chart_renders_and_its_texts_hold_no_digits(trace: Trace) -> None:
    for chart in charts_gradient_flow.CHARTS:
        texts = [chart.title, chart.desc, chart.xlabel, chart.ylabel,
                 *(line.label for line in chart.lines)]
        assert not any(number_tokens(text) for text in texts), chart.name
        assert render_chart(chart.name, trace).startswith("<svg")


def test_positions_plot_one_to_n_and_name_rows_in_words(trace: Trace, extra_chart: None) -> None:
    plot = plot_of("gf-test", trace)
    blocks = trace.resolve("PLACEMENT[postnorm-12].blocks")
    assert plot.series[0].x == tuple(float(i) for i in range(1, blocks + 1))
    assert plot.series[0].low == trace.resolve("PLACEMENT[postnorm-12].gradient-low")
    table = str(values_table("gf-test", trace))
    heads = re.findall(r'<th scope="row">([^<]*)</th>', table)
    assert heads == [number_words(i) for i in range(1, blocks + 1)]
    assert "<th scope=\"col\">post, low</th>" in table and "post, high</th>" in table
    # Outside the traced spans, the table holds no digit at all.
    untraced = re.sub(r"<(span|td) class=\"tv\"[^>]*>[^<]*</\1>", "", table)
    assert number_tokens(re.sub(r"<[^>]+>", " ", untraced)) == []


def test_yardsticks_are_drawn_and_listed_and_shared_ranges_hold_both_charts(
        trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    gain = Yardstick("teacher gain", "TRAINING-CONFIG.teacher-gain")
    for name, curve, other, references in (("gf-one", "plain-2", "gf-two", (gain,)),
                                           ("gf-two", "residual-32", "gf-one", ())):
        monkeypatch.setitem(CHARTS, name, Chart(
            name, "gradient-flow-v4", "t", "d", "step", "loss",
            (Line(curve, f"TRAINING[{curve}].steps", f"TRAINING[{curve}].loss"),),
            references=references, shares_y_with=(other,)))
    one, two = plot_of("gf-one", trace), plot_of("gf-two", trace)
    assert one.references == (("teacher gain", trace.resolve("TRAINING-CONFIG.teacher-gain")),)
    assert one.ylim == two.ylim and plot_of("gf-training", trace).ylim is None
    drawn = [*one.series[0].y, *two.series[0].y, one.references[0][1]]
    assert one.ylim[0] < min(drawn) and max(drawn) < one.ylim[1]
    assert "teacher gain" in render_chart("gf-one", trace)
    table = str(values_table("gf-one", trace))
    assert '<tfoot><tr><th scope="row">teacher gain</th><td colspan="1">' in table
    assert 'data-trace="gradient-flow-v4:TRAINING-CONFIG.teacher-gain"' in table


def test_a_column_path_reads_every_record_of_a_kind(trace: Trace) -> None:
    plot = plot_of("gf-random-paths", trace)
    lengths = [record.length for record in trace.random_path]
    assert plot.series[0].x == tuple(float(k) for k in lengths)
    assert plot.series[0].y == tuple(float(record.count) for record in trace.random_path)
    assert plot.series[2].y == tuple(record.norm for record in trace.random_path)
    table = str(values_table("gf-random-paths", trace))
    assert 'data-trace="gradient-flow-v4:RANDOM-PATH[16].length"' in table


def test_lines_with_equal_x_values_share_rows(trace: Trace) -> None:
    table = str(values_table("gf-training", trace))
    steps = trace.resolve("TRAINING[plain-2].steps")
    assert table.count('<tr><th scope="row">') == len(steps)
    assert 'data-trace="gradient-flow-v4:TRAINING[residual-32].loss[0]"' in table


def test_a_bad_column_is_a_render_error(trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = Chart("gf-bad", "gradient-flow-v4", "t", "d", "x", "y",
                  (Line("l", "SWEEP-CONFIG[*].depths", "SWEEP-CONFIG[*].depths"),))
    monkeypatch.setitem(CHARTS, chart.name, chart)
    with pytest.raises(RenderError, match="column"):
        plot_of("gf-bad", trace)
