"""Tests for sitebuild/exactness.py: a sentence never claims more exactness than its values.

Each source is rendered as a page is (the page environment, ``tv`` writing its traced span)
and the rule read on what rendered, so a keyword format, a loop or a macro count like a
literal call.
"""

from __future__ import annotations

import re

import pytest
from test_format import Values

from diagrams.format import format_value, traced
from sitebuild.exactness import check_exactness
from sitebuild.page_context import PROSE_FORMAT, PageError
from sitebuild.render import make_env
from tracefile import TraceSet

PAGE = "docs/page.md"
CHAPTER = "residual-connections-v2"
STREAM = "residual-stream-v4"


def check(source: str, traces: TraceSet | Values, **values: object) -> None:
    def tv(path: str, fmt: str = PROSE_FORMAT) -> str:
        return traced(traces, path, fmt)

    page = make_env().from_string(source).render(tv=tv, **values)
    check_exactness(page, PAGE, traces.resolve, source)


def test_a_sentence_saying_exactly_shows_every_value_as_stored(golden_traces: TraceSet) -> None:
    # RETENTION.residual is 0.31640625: four significant figures round it.
    with pytest.raises(PageError) as caught:
        check('A first line.\nIt keeps exactly {{ tv("RETENTION.residual") }}.\n', golden_traces)
    assert str(caught.value) == (
        f"{PAGE}:2: a sentence saying 'exactly' shows {CHAPTER}:RETENTION.residual as 0.3164, "
        'stored as 0.31640625: show it as stored (tv("RETENTION.residual", "exact")) or drop '
        "'exactly'")
    check('It keeps exactly {{ tv("RETENTION.residual", "exact") }}.', golden_traces)
    check('It keeps {{ tv("RETENTION.residual") }}. That is exact enough.', golden_traces)


@pytest.mark.parametrize("source", [
    # the word only in a format name, in inline code, in a code block or in a comment
    'It keeps {{ tv("RETENTION.plain", "exact") }} and {{ tv("RETENTION.residual") }}.',
    'Write `tv(path, "exact")`: it keeps {{ tv("RETENTION.residual") }}.',
    '```text\nexactly\n```\nIt keeps {{ tv("RETENTION.residual") }}.',
    '<#-- exactly --#>It keeps {{ tv("RETENTION.residual") }}.',
])
def test_only_the_prose_a_reader_sees_claims_exactness(source: str,
                                                       golden_traces: TraceSet) -> None:
    check(source, golden_traces)


def test_two_values_shown_alike_but_stored_apart_are_refused(golden_traces: TraceSet) -> None:
    traces = TraceSet(golden_traces.traces, STREAM)
    half, bfloat = "FORMAT[fp-sixteen].stream-loss", "FORMAT[bf-sixteen].stream-loss"
    check(f'Both {{{{ tv("{half}") }}}} and {{{{ tv("{half}") }}}}.', traces)  # one value, twice
    # Two losses that differ in the fourth decimal: at four figures a sentence says they are
    # equal, and shown to six it does not.
    with pytest.raises(PageError, match=re.escape(
            f"{PAGE}:2: a sentence shows {STREAM}:{half} and {STREAM}:{bfloat} both as 1.272, "
            "stored as 1.27229")):
        check(f'Compare\n{{{{ tv("{half}") }}}} with {{{{ tv("{bfloat}") }}}}.', traces)
    check(f'Compare {{{{ tv("{half}", "fixed6") }}}} with {{{{ tv("{bfloat}", "fixed6") }}}}.',
          traces)


@pytest.mark.parametrize("source", [
    # a keyword format, a loop over the paths, a macro: the rule reads what they rendered
    'Compare {{ tv(a, fmt="sig4") }} with {{ tv(b, fmt="sig4") }}.',
    "Compare {% for p in [a, b] %}{{ tv(p) }} {% endfor %}.",
    "{% macro both(x, y) %}{{ tv(x) }} with {{ tv(y) }}{% endmacro %}Compare {{ both(a, b) }}.",
])
def test_every_form_of_the_template_counts(source: str, golden_traces: TraceSet) -> None:
    traces = TraceSet(golden_traces.traces, STREAM)
    with pytest.raises(PageError, match=r"both as 1\.272"):
        check(source, traces, a="FORMAT[fp-sixteen].stream-loss",
              b="FORMAT[bf-sixteen].stream-loss")


def test_vectors_rounded_alike_and_a_float_before_an_int_are_held_to_the_rule() -> None:
    seeds = Values(a=(2.5271, 2.5268, 2.528), b=(2.5272, 2.5268, 2.528), n=1, x=0.9999988)
    with pytest.raises(PageError, match=r"t:a and t:b both as \[2\.527, 2\.527, 2\.528\]"):
        check("Seeds {{ tv('a', 'sig4') }} and {{ tv('b', 'sig4') }}.", seeds)
    # A float that rounds to a whole number keeps its figures, so it never reads as the int.
    check("It is {{ tv('x', 'sig4') }} and {{ tv('n') }}.", seeds)
    assert format_value(0.9999988, "sig4") == "1.000" and format_value(9.99995, "sig4") == \
        "10.00"


def test_a_sentence_ends_at_a_blank_line_and_before_a_list_item(golden_traces: TraceSet) -> None:
    for source in ('It is exact\n\n{{ tv("RETENTION.residual") }} is not.',
                   'Exact ones:\n- {{ tv("RETENTION.residual") }} is not'):
        check(source, golden_traces)


def test_a_table_row_is_not_one_sentence(golden_traces: TraceSet) -> None:
    traces = TraceSet(golden_traces.traces, STREAM)
    check('| {{ tv("FORMAT[fp-sixteen].stream-loss") }} | '
          '{{ tv("FORMAT[bf-sixteen].stream-loss") }} |\n', traces)
