"""Shared vocabulary of the site gates: the `Finding` record and the walk over built pages.

Contract: a gate never raises on a broken page; it returns `Finding`s. A finding names the
page relative to the site root (POSIX separators), the 1-based source line of the offending
tag or text when known, the gate's name and a one-line message; `str(finding)` is the line
`site/PAGE:LINE: [gate] message` that `build_site.py` prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Elements that never have an end tag: the gates' tag stacks must not push them.
VOID_ELEMENTS = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr",
})


@dataclass(frozen=True)
class Finding:
    """One defect found by a gate in a built page."""

    page: str
    line: int | None
    gate: str
    message: str

    def __str__(self) -> str:
        where = f"site/{self.page}" if self.line is None else f"site/{self.page}:{self.line}"
        # One line, always: a message must never smuggle a newline into the build log.
        message = " ".join(self.message.split())
        return f"{where}: [{self.gate}] {message}"

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.page, self.line or 0, self.gate, self.message)


def html_pages(site_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield `(relative POSIX path, text)` for every built HTML page, in a stable order."""
    for path in sorted(site_dir.rglob("*.html")):
        if path.is_file():
            rel = path.relative_to(site_dir).as_posix()
            yield rel, path.read_text(encoding="utf-8", errors="replace")


def class_list(attrs: list[tuple[str, str | None]]) -> frozenset[str]:
    """The classes of a start tag, from html.parser's attribute list."""
    return frozenset((attr(attrs, "class") or "").split())


def attr(attrs: list[tuple[str, str | None]], name: str) -> str | None:
    """The value of attribute `name` (first occurrence), or None when absent."""
    for key, value in attrs:
        if key == name:
            return value if value is not None else ""
    return None


def shorten(text: str, limit: int = 80) -> str:
    """A message-safe excerpt: whitespace collapsed, long text cut with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
