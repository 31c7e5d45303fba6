"""Tests for the citations the audit accepts (sitebuild/citations.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild.citations import project_references, render_citation, rendered_citations
from sitebuild.errors import GateError
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


def test_mkdocs_tags_are_read_but_never_run(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text(
        "site_url: !ENV [SITE_URL, 'x']\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:os.system\n" + ENTRY, encoding="utf-8")
    references = project_references(tmp_path)
    assert rendered_citations(references) == {str(render_citation(references, "he2016"))}


@pytest.mark.parametrize(("text", "error"), [
    ("extra: [unclosed\n", GateError),
    (ENTRY.replace('"1512.03385"', "1512.03385"), LocatedError),  # YAML reads a float
])
def test_bad_bibliography_is_a_located_error(tmp_path: Path, text: str,
                                             error: type[LocatedError]) -> None:
    (tmp_path / "mkdocs.yml").write_text(text, encoding="utf-8")
    with pytest.raises(error, match=r"mkdocs\.yml"):
        project_references(tmp_path)


def test_missing_mkdocs_yml_is_a_gate_error(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="cannot read the bibliography"):
        project_references(tmp_path)
