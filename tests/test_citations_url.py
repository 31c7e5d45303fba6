"""Citations of work not on arXiv: an https address instead of an identifier, exactly one."""

from __future__ import annotations

import pytest

from sitebuild.citations import load_references, render_citation, render_reference
from tracefile.errors import LocatedError

BASE = {"authors": "A. Author", "title": "A Title", "venue": "A Blog", "year": "2020"}


def test_a_url_entry_renders_with_its_address() -> None:
    refs = load_references({"references": {"k": {**BASE, "url": "https://example.org/x"}}})
    assert str(render_reference(refs, "k")) == (
        '<cite class="citation">A. Author, “<a href="https://example.org/x">A Title</a>”, '
        "A Blog 2020.</cite>")
    assert str(render_citation(refs, "k")) == (
        '<cite class="citation"><a class="citation-ref" href="#ref-k" data-preview="A. Author '
        '(2020). A Title. A Blog. https://example.org/x">(Author 2020)</a></cite>')


@pytest.mark.parametrize(("extra", "problem"), [
    ({}, "one of arxiv or url"),
    ({"arxiv": "1512.03385", "url": "https://example.org"}, "one of arxiv or url"),
    ({"url": "http://example.org"}, "expected an https:// address"),
    ({"url": "https://example.org/a b"}, "expected an https:// address"),
])
def test_an_entry_needs_exactly_one_good_locator(extra: dict[str, str], problem: str) -> None:
    with pytest.raises(LocatedError, match=problem):
        load_references({"references": {"k": {**BASE, **extra}}})
