"""Errors of the build package: gates that cannot run and failed build phases."""

from __future__ import annotations

import html
from pathlib import Path

from tracefile.errors import LocatedError


class BuildError(LocatedError):
    """A failed build phase, or a gate that cannot run at all (no site folder, an unreadable
    page: what a gate finds wrong in a readable site is a ``Finding``); ``path`` names the file
    or the phase.

    Takes the message before the (optional) line, as build code mostly has no line.
    """

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        super().__init__(path, line, message)


def last_line(output: str) -> str:
    """The last line a failed tool printed that says something (its error, usually)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def line_holding(path: Path, needles: tuple[str, ...]) -> int | None:
    """The first line of ``path`` holding the first of ``needles`` found there, as written or
    with its character references read (``&#52;&#50;`` holds "42"), or None."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for needle in filter(None, needles):
        for number, line in enumerate(lines, 1):
            if needle in line or needle in html.unescape(line):
                return number
    return None
