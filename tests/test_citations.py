"""The bibliography in mkdocs.yml, the functions that render a citation (in the text, and in
a page's References), and the labels the text cites works by."""

from __future__ import annotations

import pytest
from paths import ROOT

from sitebuild.citations import (
    PageCitations,
    load_references,
    render_citation,
    render_reference,
    short_authors,
)
from sitebuild.generator import read_settings
from tracefile.errors import LocatedError

ENTRY = {"authors": "A. Author & B. <Author>", "title": "On Things", "venue": "Conf",
         "year": "2020", "arxiv": "2001.00001"}


def project_extra() -> dict:
    return read_settings(ROOT)["extra"]


def test_the_chapter_bibliography_loads_and_renders() -> None:
    refs = load_references(project_extra())
    assert {"he2016", "vaswani2017", "he2016identity", "xiong2020", "elhage2021"} <= set(refs)
    html = str(render_reference(refs, "he2016"))
    assert html.startswith('<cite class="citation">Kaiming He')
    assert 'href="https://arxiv.org/abs/1512.03385"' in html and "CVPR 2016" in html
    # The two works of He et al. from 2016 are told apart, in bibliography order.
    assert (refs["he2016"].label, refs["he2016identity"].label) == (
        "He et al. 2016a", "He et al. 2016b")
    cited = str(render_citation(refs, "he2016identity"))
    assert cited.startswith('<cite class="citation"><a class="citation-ref" '
                            'href="#ref-he2016identity" data-preview="Kaiming He, Xiangyu Zhang')
    assert "Identity Mappings in Deep Residual Networks. ECCV. arXiv:1603.05027" in cited
    assert cited.endswith(">(He et al. 2016b)</a></cite>")


@pytest.mark.parametrize(("authors", "short"), [
    ("Kaiming He, Xiangyu Zhang, Shaoqing Ren and Jian Sun", "He et al."),
    ("Soham De and Samuel L. Smith", "De and Smith"),
    ("Ashish Vaswani et al.", "Vaswani et al."),
    ("nostalgebraist", "nostalgebraist"),
])
def test_the_text_names_one_or_two_authors(authors: str, short: str) -> None:
    assert short_authors(authors) == short


def test_a_page_lists_what_it_cited_once_by_label() -> None:
    refs = load_references({"references": {
        "z": {**ENTRY, "authors": "Zed Zulu"}, "a": {**ENTRY, "authors": "Ann Alpha"}}})
    cite = PageCitations(refs)
    assert cite.section() == ""
    cite("z"), cite("a"), cite("z")
    section = cite.section()
    assert section.count("<li ") == 2
    assert section.index('id="ref-a"') < section.index('id="ref-z"')  # Alpha before Zulu


def test_fields_are_escaped() -> None:
    refs = load_references({"references": {"x": ENTRY}})
    for html in (str(render_citation(refs, "x")), str(render_reference(refs, "x"))):
        assert "A. Author &amp; B. &lt;Author&gt;" in html and "<Author>" not in html


def test_unknown_key_names_the_known_ones() -> None:
    refs = load_references({"references": {"x": ENTRY}})
    with pytest.raises(LocatedError, match=r"unknown citation 'y' \(known: x\)"):
        render_citation(refs, "y")


@pytest.mark.parametrize(
    ("entry", "message"),
    [({k: v for k, v in ENTRY.items() if k != "venue"},
      r"extra\.references\.x: expected the fields"),
     ({**ENTRY, "arxiv": 1706.0376}, r"extra\.references\.x\.arxiv: expected a quoted string"),
     ({**ENTRY, "arxiv": "arXiv 1706"}, r"extra\.references\.x\.arxiv: expected an identifier"),
     ("just text", r"got str")],
    ids=["missing-field", "unquoted-arxiv", "bad-arxiv", "not-a-mapping"],
)
def test_malformed_entries_name_mkdocs_yml(entry: object, message: str) -> None:
    with pytest.raises(LocatedError, match=message) as caught:
        load_references({"references": {"x": entry}})
    assert str(caught.value).startswith("mkdocs.yml: ")
