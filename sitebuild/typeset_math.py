"""Math typeset at build time, so no page ships or runs math JavaScript.

Contract: ``typeset_site(root, site_dir, pages)`` replaces the TeX inside every formula
pymdownx.arithmatex left in the built pages (their HTML given, typeset HTML returned; generic
mode: ``<span class="arithmatex">\\(…\\)`` inline, ``<div class="arithmatex">\\[…\\]``
displayed) by KaTeX's HTML and MathML, rendered by the project's npm KaTeX in one ``node``
process; the page then needs only KaTeX's stylesheet and fonts. In a table header the HTML is
what assistive technology reads, not the MathML (header checks count only text they can see). A
formula KaTeX cannot parse is a ``BuildError`` at its ``docs/`` page and line. ``typeset_page``
does the same for one page's HTML (the preview's server calls it).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from sitebuild.errors import BuildError, line_holding
from tracefile.errors import shorten

KATEX_PACKAGE = "node_modules/katex"
_SCRIPT = Path(__file__).with_name("typeset_katex.js")
#: How long node may take over every formula of the site (it takes a second or two).
NODE_SECONDS = 120
_FORMULA = re.compile(r'(<(span|div) class="arithmatex">)(.*?)(</\2>)', re.S)
_DELIMITERS = re.compile(r"\A\s*\\[(\[](.*)\\[)\]]\s*\Z", re.S)
_HEADER_CELL = re.compile(r"<th[\s>]|</th>")
#: One formula: its TeX, whether it is displayed, whether it sits in a table header.
Formula = tuple[str, bool, bool]


def typeset_site(root: Path, site_dir: Path, pages: dict[Path, str]) -> dict[Path, str]:
    """``pages`` (each built page of ``site_dir`` and its HTML) with every formula typeset
    (see the module doc)."""
    found = {page: _formulas(text) for page, text in pages.items()}
    wanted = sorted({formula for formulas in found.values() for formula, _ in formulas})
    if not wanted:
        return pages
    # A formula KaTeX refuses is named at the first page holding it.
    first = {formula: page for page, formulas in reversed(found.items()) for formula, _ in formulas}
    done = _render(root, wanted, lambda formula: _source(root, site_dir, first[formula],
                                                         formula[0]))
    return {page: _replace(text, found[page], done) for page, text in pages.items()}


def typeset_page(root: Path, text: str, known: dict[Formula, str | None]) -> str:
    """``text`` (one page's HTML) with its formulas typeset, rendering only those not in
    ``known`` (which gains them); a formula KaTeX rejects stays as its TeX, marked
    ``math-error``: the preview shows the page, the build refuses it."""
    formulas = _formulas(text)
    if new := sorted({formula for formula, _ in formulas} - known.keys()):
        known.update(_render(root, new, None))
    return _replace(text, formulas, known) if formulas else text


def _formulas(text: str) -> list[tuple[Formula, re.Match[str]]]:
    found, at, in_header = [], 0, False
    for match in _FORMULA.finditer(text):
        # Whether a header cell is open here: the last <th> or </th> since the last formula.
        for cell in _HEADER_CELL.finditer(text, at, match.start()):
            in_header = cell[0] != "</th>"
        at = match.end()
        inner = _DELIMITERS.match(html.unescape(match[3]))
        if inner is not None:  # else typeset already, or not arithmatex's
            found.append(((inner[1], match[2] == "div", in_header), match))
    return found


def _replace(text: str, formulas: list[tuple[Formula, re.Match[str]]],
             done: dict[Formula, str | None]) -> str:
    pieces, at = [], 0
    for formula, match in formulas:
        typeset = done[formula]
        opening = match[1] if typeset else match[1].replace('arithmatex"', 'arithmatex math-error"')
        pieces += [text[at:match.start()], opening, typeset or match[3], match[4]]
        at = match.end()
    return "".join([*pieces, text[at:]])


def _render(root: Path, formulas: list[Formula],
            source_of: Callable[[Formula], tuple[str, int | None]] | None,
            ) -> dict[Formula, str | None]:
    """Each formula's KaTeX HTML (None where KaTeX refused it and ``source_of`` is None)."""
    node = shutil.which("node")
    package = root / KATEX_PACKAGE
    if node is None or not (package / "package.json").is_file():
        raise BuildError(KATEX_PACKAGE, "typesetting math needs Node.js and KaTeX: ./dev setup")
    request = json.dumps([[tex, display] for tex, display, _ in formulas])
    try:
        done = subprocess.run([node, str(_SCRIPT), str(package)], input=request,
                              encoding="utf-8", errors="replace", capture_output=True,
                              check=False, timeout=NODE_SECONDS)
    except subprocess.TimeoutExpired:
        raise BuildError("katex", f"typesetting {len(formulas)} formulas took longer than "
                         f"{NODE_SECONDS} s; stopped") from None
    if done.returncode != 0:
        raise BuildError("katex", f"node exited with {done.returncode}: {done.stderr.strip()}")
    results: dict[Formula, str | None] = {}
    for formula, result in zip(formulas, json.loads(done.stdout), strict=True):
        if "error" in result and source_of is not None:
            path, line = source_of(formula)
            raise BuildError(path, f"KaTeX cannot typeset ${shorten(formula[0])}$: "
                             f"{shorten(result['error'], 300)}", line)
        typeset = result.get("html")
        if typeset is not None and formula[2]:
            # Header checks count only text they can see: the HTML is what assistive
            # technology reads here, and the MathML (which keeps the TeX) is hidden from it.
            typeset = typeset.replace('<span class="katex-mathml">',
                                      '<span class="katex-mathml" aria-hidden="true">', 1)
            typeset = typeset.replace('<span class="katex-html" aria-hidden="true">',
                                      '<span class="katex-html">', 1)
        results[formula] = typeset
    return results


def _source(root: Path, site_dir: Path, page: Path, tex: str) -> tuple[str, int | None]:
    """The ``docs/`` page a built page came from, and the line of ``tex`` in it."""
    rel = "docs/" + page.relative_to(site_dir).with_suffix(".md").as_posix()
    return rel, line_holding(root / rel, (tex.strip(),))
