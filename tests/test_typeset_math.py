"""sitebuild.typeset_math: every formula typeset at build time by the project's KaTeX, a formula
KaTeX rejects refused at its page and line, and the preview's per-page typesetting."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from paths import ROOT

from sitebuild.errors import BuildError
from sitebuild.typeset_math import KATEX_PACKAGE, typeset_page, typeset_site

INLINE = r'<p>Here <span class="arithmatex">\(y = x + F(x) &lt; z\)</span>.</p>'
DISPLAY = '<div class="arithmatex">\\[\\frac{\\partial y}{\\partial x}\\]</div>'
HEADER = r'<table><thead><tr><th><span class="arithmatex">\(\bar{y}\)</span></th></tr></thead>'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding the real KaTeX, a source page and its built HTML."""
    (tmp_path / "node_modules").mkdir()
    (tmp_path / KATEX_PACKAGE).symlink_to(ROOT / KATEX_PACKAGE)
    (tmp_path / "docs" / "labs").mkdir(parents=True)
    (tmp_path / "site" / "labs").mkdir(parents=True)
    return tmp_path


def typeset(project: Path, html: str) -> str:
    page = project / "site" / "labs" / "lab.html"
    return typeset_site(project, project / "site", {page: html})[page]


def test_inline_display_and_header_math_is_typeset(project: Path) -> None:
    html = typeset(project, INLINE + DISPLAY + HEADER)
    assert "\\(" not in html and "\\[" not in html
    assert html.count('class="arithmatex"') == 3  # the wrappers stay, for the page's styles
    inline, display, header = html.split('class="arithmatex"')[1:]
    # Text and MathML; the TeX kept as MathML's annotation, its "<" escaped again.
    assert '<span class="katex"><span class="katex-mathml"><math' in inline
    assert "y = x + F(x) &lt; z</annotation>" in inline
    assert 'class="katex-display"' in display and "katex-display" not in inline
    # In a header the HTML is what assistive technology reads; the MathML keeps the TeX.
    assert '<span class="katex-mathml" aria-hidden="true">' in header
    assert '<span class="katex-html">' in header and "\\bar{y}</annotation>" in header


def test_a_formula_katex_rejects_fails_at_its_page_and_line(project: Path) -> None:
    (project / "docs" / "labs" / "lab.md").write_text("# Lab\n\nSee $\\frac{x$ here.\n")
    with pytest.raises(BuildError) as caught:
        typeset(project, r'<p>See <span class="arithmatex">\(\frac{x\)</span> here.</p>')
    assert (caught.value.path, caught.value.line) == ("docs/labs/lab.md", 3)
    assert "KaTeX cannot typeset $\\frac{x$" in str(caught.value)


@pytest.mark.parametrize("tex", [r"\href{javascript:alert(1)}{x}", r"\url{https://example.org}",
                                 r"\htmlData{a=b}{x}", r"\includegraphics{x.png}"])
def test_a_formula_that_would_link_load_or_carry_html_fails_at_its_line(
        project: Path, tex: str) -> None:
    (project / "docs" / "labs" / "lab.md").write_text(f"# Lab\n\nSee ${tex}$ here.\n")
    with pytest.raises(BuildError) as caught:
        typeset(project, f'<p>See <span class="arithmatex">\\({tex}\\)</span> here.</p>')
    assert (caught.value.path, caught.value.line) == ("docs/labs/lab.md", 3)
    assert f"{tex.split('{')[0]} is not allowed in the site's math" in str(caught.value)


def test_a_huge_broken_formula_gives_a_short_line(project: Path) -> None:
    tex = r"\frac{x" + "y" * 800_000
    (project / "docs" / "labs" / "lab.md").write_text(f"# Lab\n\n${tex}$\n")
    with pytest.raises(BuildError) as caught:
        typeset(project, f'<p><span class="arithmatex">\\({tex}\\)</span></p>')
    assert caught.value.line == 3 and len(str(caught.value)) < 1000


def test_the_preview_marks_a_rejected_formula_and_renders_each_formula_once(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    known: dict = {}
    page = INLINE + r'<span class="arithmatex">\(\frac{\)</span>'
    typeset = typeset_page(project, page, known)
    assert 'class="arithmatex math-error">\\(\\frac{\\)' in typeset
    assert typeset.count('<span class="katex">') == 1
    monkeypatch.setattr(shutil, "which", lambda name: None)  # node is not asked again
    assert typeset_page(project, page, known) == typeset


def test_missing_node_or_katex_names_dev_setup(project: Path) -> None:
    (project / KATEX_PACKAGE).unlink()
    with pytest.raises(BuildError, match=r"needs Node.js and KaTeX: ./dev setup"):
        typeset(project, INLINE)


def test_a_formula_after_a_closed_header_cell_is_body_math(project: Path) -> None:
    body = r'<tbody><tr><td><span class="arithmatex">\(\bar{y}\)</span></td></tr></tbody>'
    html = typeset(project, HEADER + body)
    header, cell = html.split('class="arithmatex"')[1:]
    assert 'katex-mathml" aria-hidden="true"' in header
    assert 'katex-mathml" aria-hidden' not in cell and 'katex-html" aria-hidden="true"' in cell
