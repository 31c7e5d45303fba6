"""Tests for sitebuild/exactness.py: a sentence never claims more exactness than its values."""

from __future__ import annotations

import re

import pytest

from sitebuild.exactness import check_exactness
from sitebuild.page_context import PROSE_FORMAT, PageError
from tracefile import TraceSet

PAGE = "docs/page.md"


def check(source: str, traces: TraceSet) -> None:
    check_exactness(source, PAGE, traces.resolve, PROSE_FORMAT)


def test_a_sentence_saying_exactly_shows_every_value_as_stored(golden_traces: TraceSet) -> None:
    # RETENTION.residual is 0.31640625: four significant figures round it.
    with pytest.raises(PageError) as caught:
        check('A first line.\nIt keeps exactly {{ tv("RETENTION.residual") }}.\n', golden_traces)
    assert str(caught.value) == (
        f"{PAGE}:2: a sentence saying 'exactly' shows RETENTION.residual as 0.3164, stored as "
        '0.31640625: show it as stored (tv("RETENTION.residual", "exact")) or drop \'exactly\'')
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
    traces = TraceSet(golden_traces.traces, "residual-stream-v3")
    half, bfloat = "FORMAT[fp-sixteen].stream-loss", "FORMAT[bf-sixteen].stream-loss"
    check(f'Both {{{{ tv("{half}") }}}} and {{{{ tv("{half}") }}}}.', traces)  # one value, twice
    # Two losses that differ in the fourth decimal: at four figures a sentence says they are
    # equal, and shown to six it does not.
    with pytest.raises(PageError, match=re.escape(f"{PAGE}:2: a sentence shows {half} and "
                                                  f"{bfloat} both as 1.272, stored as 1.27229")):
        check(f'Compare\n{{{{ tv("{half}") }}}} with {{{{ tv("{bfloat}") }}}}.', traces)
    check(f'Compare {{{{ tv("{half}", "fixed6") }}}} with {{{{ tv("{bfloat}", "fixed6") }}}}.',
          traces)


def test_a_sentence_ends_at_a_blank_line_and_before_a_list_item(golden_traces: TraceSet) -> None:
    for source in ('It is exact\n\n{{ tv("RETENTION.residual") }} is not.',
                   'Exact ones:\n- {{ tv("RETENTION.residual") }} is not'):
        check(source, golden_traces)
