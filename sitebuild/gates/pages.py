"""What the gates share: the ``Finding`` record, the walk over built pages, and the one
structural definition of a code listing.

Contract: a gate returns ``Finding``s and never raises on a broken page (a site it cannot read
at all raises ``BuildError``). ``str(finding)`` names the source to edit first:
``docs/PAGE.md:LINE: [gate] message (built into SITE/PAGE.html:LINE)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from sitebuild.errors import BuildError, line_holding

# Elements that never have an end tag: the gates' tag stacks must not push them.
VOID_ELEMENTS = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr",
})
# Attributes a reader sees (tooltips, alt text) or hears (screen readers) on any element.
READER_ATTRS = (
    "alt", "title", "aria-label", "aria-description", "aria-roledescription",
    "aria-valuetext", "aria-placeholder", "placeholder", "label", "xlink:title",
    "data-preview",  # a citation's preview (assets/js/provenance.js shows it)
)
# Attributes that put a number on screen for particular elements only.
SHOWN_ATTRS = {"ol": ("start",), "li": ("value",), "input": ("value",)}


@dataclass(frozen=True)
class Finding:
    """One defect found by a gate in a built site."""

    page: str
    line: int | None
    gate: str
    message: str
    site: str = "site"  # how messages name the site folder
    source: str | None = None  # the Markdown page `page` was built from, when known
    detail: str = ""  # several lines (a diff) shown under the finding by `check`
    needles: tuple[str, ...] = ()  # text that locates the finding's line in `source`

    def __str__(self) -> str:
        page = f"{self.site.rstrip('/')}/{self.page}" if self.site else self.page
        built = page if self.line is None else f"{page}:{self.line}"
        # One line, always: a message must never smuggle a newline into the build log.
        message = " ".join(self.message.split())
        if self.source:
            return f"{self.source}: [{self.gate}] {message} (built into {built})"
        return f"{built}: [{self.gate}] {message}"

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.page, self.line or 0, self.gate, self.message)

    def shown_as(self, site: str, docs_dir: Path | None = None) -> Finding:
        """This finding with the site folder named `site` and, given the Markdown folder
        `docs_dir`, the source page hint (`docs/index.md` for `index.html`)."""
        source = self.source
        if docs_dir is not None:
            source = source or source_page(self.page, docs_dir)
            line = line_holding(docs_dir.parent / source, self.needles) if source else None
            source = f"{source}:{line}" if line else source
        return dataclasses.replace(self, site=site, source=source)


def source_page(page: str, docs_dir: Path) -> str | None:
    """`docs/PAGE.md` for a built `PAGE.html` when that Markdown file exists (MkDocs with
    `use_directory_urls: false` maps one to the other); None for theme pages like 404.html."""
    if not page.endswith(".html"):
        return None
    markdown = docs_dir / (page[: -len(".html")] + ".md")
    return f"{docs_dir.name}/{page[: -len('.html')]}.md" if markdown.is_file() else None


def html_pages(site_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield `(relative POSIX path, text)` for every built HTML page, in a stable order."""
    if not site_dir.is_dir():
        raise BuildError(str(site_dir), "no such folder: nothing to check")
    for path in sorted(site_dir.rglob("*.html")):
        if path.is_file():
            yield path.relative_to(site_dir).as_posix(), read_text(path)


def read_text(path: Path) -> str:
    """A site file's text (bad bytes replaced: a gate reports, it does not crash)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise BuildError(str(path), f"cannot read: {err.strerror or err}") from None


def class_list(attrs: list[tuple[str, str | None]]) -> frozenset[str]:
    """The classes of a start tag, from html.parser's attribute list."""
    return frozenset((attr(attrs, "class") or "").split())


def attr(attrs: list[tuple[str, str | None]], name: str) -> str | None:
    """The value of attribute `name` (first occurrence), or None when absent."""
    for key, value in attrs:
        if key == name:
            return value if value is not None else ""
    return None


def is_listing_code(tag: str, parent: tuple[str, frozenset[str]],
                    grandparent: tuple[str, frozenset[str]]) -> bool:
    """Whether a `tag` element, given its parent's and grandparent's (tag, classes), is the
    body of a code listing as pymdownx.highlight writes it: `div.highlight > pre > code` (a
    class alone proves nothing; tests/test_docs_sources.py refuses raw `<pre>`/`<code>` in the
    page sources, so only the highlighter writes the nesting)."""
    return (tag == "code" and parent[0] == "pre" and grandparent[0] == "div"
            and "highlight" in grandparent[1])


class _ListingParser(HTMLParser):
    """Collects the text of every code listing of a page, with its first line number."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # Two sentinels, so every element has a parent and a grandparent to look at.
        self.stack: list[tuple[str, frozenset[str]]] = [("#root", frozenset())] * 2
        self.depth: int | None = None  # stack depth of the open listing's <code>
        self.listings: list[tuple[int, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_ELEMENTS:
            return
        if self.depth is None and is_listing_code(tag, self.stack[-1], self.stack[-2]):
            self.depth = len(self.stack)
            self.listings.append((self.getpos()[0], []))
        self.stack.append((tag, class_list(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth][0] == tag:
                del self.stack[depth:]
                if self.depth is not None and len(self.stack) <= self.depth:
                    self.depth = None
                return

    def handle_data(self, data: str) -> None:
        if self.depth is not None:
            self.listings[-1][1].append(data)


def code_listings(html: str) -> list[tuple[int, str]]:
    """`(line, text)` of every code listing (`is_listing_code`) of a page, in order."""
    parser = _ListingParser()
    parser.feed(html)
    parser.close()
    return [(line, "".join(parts)) for line, parts in parser.listings]
