"""Errors of the site side (trace parser, value paths, rendering, gates, build phases).

Contract: every user-facing failure of the site side is a ``SiteError`` whose ``str()`` is one
line, ``"PATH:LINE: MESSAGE"`` (or ``"PATH: MESSAGE"`` when no line applies), so the build can
print it without a traceback. ``path`` names the file (or a pseudo-file such as ``<trace>``),
``line`` is 1-based.
"""

from __future__ import annotations

#: Offending text longer than this is cut, so a 10 MB line never floods a message.
MAX_SHOWN = 80


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """Return ``text`` cut to ``limit`` characters with an ellipsis and the full length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


class SiteError(Exception):
    """A located, one-line user error of the site side."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))
        # A cooperative base after this one (click's ClickException, under MkDocs'
        # PluginError) stores its argument as ``message``; keep ours without the location.
        self.message = message

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


class TraceError(SiteError):
    """A trace that does not follow the grammar in docs/trace.md.

    ``text`` is the offending text (already shortened) and ``expected`` says what the grammar
    wants there; both are folded into ``message`` so ``str()`` alone is a complete report.
    """

    def __init__(
        self,
        path: str,
        line: int | None,
        message: str,
        *,
        text: str = "",
        expected: str = "",
    ) -> None:
        self.text = shorten(text)
        self.expected = expected
        full = message
        if expected:
            full += f"; expected {expected}"
        if text:
            # repr() keeps control characters and CR visible and the message on one line.
            full += f"; got {self.text!r}"
        super().__init__(path, line, full)


class TracePathError(SiteError):
    """A value path (``FORWARD.output``, ``STACK[4].residual``) that names nothing in the trace."""


class RenderError(SiteError):
    """Graphviz missing or failing, or a template that cannot be rendered."""


class GateError(SiteError):
    """A site gate that cannot run at all (no site folder, an unreadable page or mkdocs.yml).

    What a gate finds wrong in a readable site is a ``Finding``, not an exception."""


class BuildError(SiteError):
    """A failed build phase; ``path`` names the file or the phase.

    Takes the message before the (optional) line, as build code mostly has no line.
    """

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        super().__init__(path, line, message)
