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
from sitebuild.exactness import MAX_NUMBERS, check_exactness, check_paragraph_numbers
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


def count(source: str, **values: object) -> None:
    traces = Values(**values)

    def tv(path: str, fmt: str = PROSE_FORMAT) -> str:
        return traced(traces, path, fmt)

    page = make_env().from_string(source).render(tv=tv)
    check_paragraph_numbers(page, PAGE, traces.resolve, source)


FIVE = dict(a=1.5, b=2, c=(1.0, 2.0), d=0.25, e=7.0)


def test_a_paragraph_of_five_numbers_is_refused_at_the_fifth() -> None:
    source = ('Intro.\n\n{{ tv("a") }}, {{ tv("b") }} and {{ tv("c") }},\n'
              '{{ tv("d") }} and\n{{ tv("e") }}.\n')
    with pytest.raises(PageError) as caught:
        count(source, **FIVE)
    assert str(caught.value) == (
        f"{PAGE}:5: a paragraph shows 5 numbers, more than {MAX_NUMBERS}: keep the ones its "
        "point needs and let a table or a chart carry the rest (the fifth is t:e)")


@pytest.mark.parametrize("source", [
    # four numbers, then a new paragraph, a list item, or a table row for the fifth
    '{{ tv("a") }} {{ tv("b") }} {{ tv("c") }} {{ tv("d") }}.\n\n{{ tv("e") }}.',
    '- {{ tv("a") }} {{ tv("b") }} {{ tv("c") }} {{ tv("d") }}\n- {{ tv("e") }}',
    '{{ tv("a") }} {{ tv("b") }} {{ tv("c") }} {{ tv("d") }}.\n| {{ tv("e") }} |',
    # names and yes-or-no values are not numbers
    '{{ tv("a") }} {{ tv("b") }} {{ tv("c") }} {{ tv("d") }}, {{ tv("name") }} {{ tv("flag") }}.',
    # a table carries any number of them
    '| {{ tv("a") }} | {{ tv("b") }} | {{ tv("c") }} | {{ tv("d") }} | {{ tv("e") }} |',
])
def test_four_numbers_a_paragraph_and_the_rest_elsewhere_pass(source: str) -> None:
    count(source, **FIVE, name="block0.w1", flag=True)


def test_the_rule_counts_a_list_item_on_its_own() -> None:
    with pytest.raises(PageError, match=r"^docs/page\.md:2: a paragraph shows 5 numbers"):
        count('- x\n- {{ tv("a") }} {{ tv("b") }} {{ tv("c") }} {{ tv("d") }} {{ tv("e") }}',
              **FIVE)
