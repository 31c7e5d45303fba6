"""Tests for the citations the audit accepts (sitebuild/citations.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild.citations import (
    project_references,
    render_citation,
    render_reference,
    rendered_citations,
)
from sitebuild.errors import BuildError
from tracefile.errors import LocatedError

ENTRY = """extra:
  references:
    he2016:
      authors: Kaiming He et al.
      title: Deep Residual Learning
      venue: CVPR
      year: "2016"
      arxiv: "1512.03385"
"""


def test_project_bibliography_is_loaded_from_mkdocs_yml() -> None:
    references = project_references()
    assert "he2016" in references
    assert references["he2016"].year == "2016"


def test_a_bibliography_without_tags_renders_each_entry(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text(ENTRY, encoding="utf-8")
    references = project_references(tmp_path)
    assert rendered_citations(references) == {str(render_citation(references, "he2016")),
                                              str(render_reference(references, "he2016"))}


@pytest.mark.parametrize(("line", "tag"), [
    ("site_url: !ENV [SITE_URL, 'x']", "!ENV"),
    ("hook: !!python/name:os.system", "python/name:os.system"),
])
def test_mkdocs_tags_are_refused_at_their_line_never_run(tmp_path: Path, line: str,
                                                        tag: str) -> None:
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\n{line}\n" + ENTRY, encoding="utf-8")
    with pytest.raises(BuildError) as caught:
        project_references(tmp_path)
    assert (caught.value.line, tag in str(caught.value)) == (2, True)


@pytest.mark.parametrize(("text", "error"), [
    ("extra: [unclosed\n", BuildError),
    (ENTRY.replace('"1512.03385"', "1512.03385"), LocatedError),  # YAML reads a float
])
def test_bad_bibliography_is_a_located_error(tmp_path: Path, text: str,
                                             error: type[LocatedError]) -> None:
    (tmp_path / "mkdocs.yml").write_text(text, encoding="utf-8")
    with pytest.raises(error, match=r"mkdocs\.yml"):
        project_references(tmp_path)


def test_missing_mkdocs_yml_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match=r"mkdocs\.yml: cannot read the settings"):
        project_references(tmp_path)
