"""Lint of the hand-written page sources in docs/: the gates' assumptions, checked at the source.

- No raw `<pre>`, `<code>` or highlight markup: listings come only from fenced blocks (and
  snippet includes of real source files), so the audit's listing exemption cannot be forged.
- No typed numbers in prose: outside fenced blocks, inline code, Jinja expressions and
  comments, and link targets, a page holds no number as the audit defines one
  (`diagrams.format.number_tokens`; "UTF-8" or "v1" are words): every number is `tv(...)`.
- The building page states the rules the code applies: what counts as a typed number, what
  may be published, what the preview answers.
- A command a page prints works when pasted at the project's root after the README's set-up:
  it names the project's Python (``.venv/bin/python``) or ``./dev``, never a bare ``python``,
  which on a fresh machine lacks the project's packages.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from paths import DOCS

from diagrams.format import number_tokens
from sitebuild.notebooks import NOTEBOOKS
from sitebuild.preview_server import PreviewServer
from sitebuild.publish import PUBLISHED_FILES

PAGES = sorted(DOCS.rglob("*.md"))
RAW_LISTING = re.compile(r"<\s*(pre|code)\b|class=\"[^\"]*\bhighlight\b", re.IGNORECASE)
# What may legitimately hold digits: Jinja expressions/comments, inline code, link targets.
NOT_PROSE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|<#--.*?--#>|`[^`]*`|\]\([^)]*\)", re.DOTALL)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every line outside fenced blocks, with non-prose removed."""
    stripped = NOT_PROSE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    lines, fence = [], None
    for number, line in enumerate(stripped.splitlines(), start=1):
        marker = re.match(r"\s*(```+|~~~+)", line)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            fence = None if fence else marker.group(1)
            continue
        if fence is None:
            lines.append((number, line))
    return lines


def test_there_are_pages() -> None:
    assert {p.name for p in PAGES} >= {"index.md", "trace.md", "building.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_raw_listing_markup(page: Path) -> None:
    hits = [(n, line.strip()) for n, line in prose_lines(page.read_text(encoding="utf-8"))
            if RAW_LISTING.search(line)]
    assert hits == [], f"{page.name}: raw listing HTML (use a fenced block): {hits}"


#: Inline code that starts a Python command other than the project's own.
BARE_PYTHON = re.compile(r"(?<!`)`(?:python3?|pip3?) [^`\n]*`(?!`)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_printed_command_names_the_projects_python(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    hits = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in BARE_PYTHON.finditer(text)]
    assert hits == [], f"{page.name}: a command that fails when pasted (.venv/bin/python): {hits}"


def test_the_command_lint_catches_a_bare_python() -> None:
    assert BARE_PYTHON.search("Run `python -m engine trace` here.")
    assert not BARE_PYTHON.search("Run `.venv/bin/python -m engine trace` or `./dev run`.")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_typed_numbers_in_prose(page: Path) -> None:
    hits = [(n, line.strip()) for n, line in prose_lines(page.read_text(encoding="utf-8"))
            if number_tokens(line)]
    assert hits == [], f"{page.name}: typed numbers (use tv(...) or cite(...)): {hits}"


@pytest.mark.parametrize(
    "text",
    ['The loss fell to 0.42.', '<pre><code>x = 1</code></pre>',
     '<div class="language-text highlight">', 'See {{ tv("A.b") }} and 3 more.'],
)
def test_the_lint_catches_typed_digits_and_raw_listings(text: str) -> None:
    lines = prose_lines(text)
    assert any(number_tokens(line) or RAW_LISTING.search(line) for _, line in lines)


def test_the_lint_ignores_what_is_not_prose() -> None:
    text = ('Value {{ tv("STACK[4].plain") }} and `float64`, [link](x.md#h2).\n'
            '<#-- note 12 --#>\n```text\nTRACE 1 2 3\n```\n')
    assert all(not number_tokens(line) for _, line in prose_lines(text))


#: What docs/building.md says counts as a typed number, phrase by phrase, with a sample of each
#: and whether ``number_tokens`` counts it: the page and the code must say the same thing.
NUMBER_RULES = {
    "a run of decimal digits in any script": ("\u0664\u0662", True),  # Arabic-Indic 42
    "superscript digits as in an exponent": ("10\u00b3", True),
    "fractions": ("\u00bd", True),
    "Roman and circled numerals": ("\u216b \u2464", True),
    "Subscript digits are the one exception": ("x\u2081", False),
}


def test_the_building_page_states_the_rules_the_code_applies() -> None:
    page = " ".join((DOCS / "building.md").read_text(encoding="utf-8").split())
    for phrase, (sample, counted) in NUMBER_RULES.items():
        assert phrase in page, phrase
        assert bool(number_tokens(sample)) is counted, (phrase, sample)
    assert f"lists its own files in `{PUBLISHED_FILES}`" in page
    assert "a symbolic link in `docs/` fails the render" in page
    assert f"the labs' notebooks executed from `{NOTEBOOKS}/`" in page
    assert f"source `{NOTEBOOKS}/<lab>.py` in jupytext's percent format" in page
    assert "its `Host` is the preview's address, or `localhost` at its port" in page
    server = PreviewServer("127.0.0.1", 0)
    port = server.server_address[1]
    server.server_close()
    assert server.hosts == {f"127.0.0.1:{port}", f"localhost:{port}"}


def test_the_chapter_asks_two_questions_first_and_answers_once_at_the_end() -> None:
    page = (DOCS / "index.md").read_text(encoding="utf-8")
    opening = page[page.index("{#predict}"):page.index("\n## ", page.index("{#predict}"))]
    assert opening.count('!!! question "') == 2, "two predictions before anything is taught"
    # The answers live in one place: the table at the end, not in a fold under each question.
    assert "??? success" not in page and page.count("question \"") == 3  # and one list
    assert page.index('{{ table("predictions") }}') > page.index("{#answers}") > page.index(
        "{ #toy-not-bound }")
    # No symbol is used before the symbols table of "who plays which part" defines it.
    defined = page.index("{#roles}")
    for symbol in (r"\bar{y}", r"\bar{x}", "J_F", "adjoint"):
        assert page.index(symbol) > defined, symbol
