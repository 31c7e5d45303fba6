"""Tests for sitebuild/numbering.py: figures, tables and equations numbered in the order a page
shows them, references rendered from that numbering, and the audit's view of both.

A label is numbered per kind; a reference before its element resolves on the second rendering,
a reference to a label the page never shows is an error naming the labels it has, and of a
built page's labels and references only those in step with its numbering are accepted.
"""

from __future__ import annotations

import pytest

from sitebuild.numbering import Numbering, numbered_html
from tracefile.errors import LocatedError


def test_each_kind_is_numbered_in_the_order_shown() -> None:
    numbering = Numbering()
    labels = [str(numbering.label(kind, f"e{at}")) for at, kind in
              enumerate(("Figure", "Table", "Figure", "Equation", "Table"))]
    assert [label.split(">")[1].split("<")[0] for label in labels] == [
        "Figure 1", "Table 1", "Figure 2", "(1)", "Table 2"]
    assert labels[0] == '<span class="element-number" data-for="e0">Figure 1</span>'
    with pytest.raises(LocatedError, match="'e0' is shown twice"):
        numbering.label("Figure", "e0")


def test_a_reference_reads_its_elements_number_and_links_to_it() -> None:
    numbering = Numbering()
    numbering.label("Table", "table-stack")
    assert str(numbering("table-stack")) == (
        '<a class="element-ref" href="#table-stack">Table 1</a>')
    assert not numbering.missed


def test_a_reference_before_its_element_waits_for_the_second_rendering() -> None:
    first = Numbering()
    assert str(first("figure-later")) == "" and first.missed
    first.label("Figure", "figure-later")
    second = Numbering(first.shown)
    assert str(second("figure-later")) == (
        '<a class="element-ref" href="#figure-later">Figure 1</a>')
    with pytest.raises(LocatedError, match=r"ref\('figure-nowhere'\): no figure, table or "
                                           r"equation of the page has that label \(it has: "
                                           r"figure-later\)"):
        second("figure-nowhere")


def test_the_audit_accepts_only_numbers_in_step_with_the_page() -> None:
    numbering = Numbering()
    first, second = numbering.label("Figure", "a"), numbering.label("Figure", "b")
    ref = str(numbering("b"))
    page = f"<p>{first} {second} see {ref}</p>"
    assert numbered_html(page) == {str(first), str(second), ref}
    typed = '<a class="element-ref" href="#b">Figure 1</a>'  # b is Figure 2
    skipped = '<span class="element-number" data-for="c">Figure 4</span>'  # the third is 3
    assert numbered_html(f"{page} {typed} {skipped}") == {str(first), str(second), ref}
