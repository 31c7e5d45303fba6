"""The bibliography in mkdocs.yml and the one function that renders a citation."""

from __future__ import annotations

import pytest
from paths import ROOT

from sitebuild.citations import load_references, render_citation
from sitebuild.generator import read_settings
from tracefile.errors import LocatedError

ENTRY = {"authors": "A. Author & B. <Author>", "title": "On Things", "venue": "Conf",
         "year": "2020", "arxiv": "2001.00001"}


def project_extra() -> dict:
    return read_settings(ROOT)["extra"]


def test_the_chapter_bibliography_loads_and_renders() -> None:
    refs = load_references(project_extra())
    assert {"he2016", "vaswani2017", "he2016identity", "xiong2020", "elhage2021"} <= set(refs)
    html = str(render_citation(refs, "he2016"))
    assert html.startswith('<cite class="citation">Kaiming He')
    assert 'href="https://arxiv.org/abs/1512.03385"' in html and "CVPR 2016" in html


def test_fields_are_escaped() -> None:
    html = str(render_citation(load_references({"references": {"x": ENTRY}}), "x"))
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
