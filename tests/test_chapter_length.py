"""The chapter's length: its prose, as a reader meets it, stays within the word budget.

Counted on the built page, inside its article, outside code blocks, tables, figures, folded
blocks (``<details>``) and typeset math: the words a reader must read through to finish it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

#: The economy goal: the course's own chapter pages run about two and a half thousand words;
#: this one keeps every fixture, figure and prediction within three and a half.
WORD_BUDGET = 3_500
SKIPPED_TAGS = {"pre", "table", "figure", "details", "svg", "math", "script", "style"}
SKIPPED_CLASSES = {"katex", "headerlink"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


class _ProseWords(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, bool]] = []  # (tag, starts a skipped region)
        self.article = self.skipped = 0
        self.words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skip = tag in SKIPPED_TAGS or bool(classes & SKIPPED_CLASSES)
        self.open.append((tag, skip))
        self.article += tag == "article"
        self.skipped += skip

    def handle_endtag(self, tag: str) -> None:
        while self.open:  # an unclosed <p> or <li> closes with its parent
            opened, skip = self.open.pop()
            self.article -= opened == "article"
            self.skipped -= skip
            if opened == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.article and not self.skipped:
            self.words += [word for word in data.split() if re.search(r"\w", word)]


def prose_words(page: str) -> int:
    """How many words of running prose the page's article holds."""
    parser = _ProseWords()
    parser.feed(page)
    return len(parser.words)


def test_prose_is_counted_and_what_a_reader_may_skip_is_not() -> None:
    page = ("<nav>Home page</nav><article><h1>Title here</h1><p>One two — three.<p>Four"
            "<pre>code code</pre><table><tr><td>cell</td></tr></table><figure>drawn"
            "<figcaption>caption</figcaption></figure><details><summary>fold</summary>inside"
            '</details><span class="katex"><math>x</math>x</span> five<br>six</article>')
    assert prose_words(page) == 8
    assert prose_words(page.replace("<p>Four", "<p>Four and more")) == 10


@pytest.mark.slow
def test_the_chapter_prose_stays_within_its_word_budget(built_site: Path) -> None:
    words = prose_words((built_site / "index.html").read_text(encoding="utf-8"))
    assert words > WORD_BUDGET // 2, f"{words} words: the count missed the article"
    assert words <= WORD_BUDGET, f"the chapter's prose runs {words} words"
