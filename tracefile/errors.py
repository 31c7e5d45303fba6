"""Errors of the trace contract: a located one-line error, bad traces and bad value paths.

Contract: every user-facing failure is a ``LocatedError`` whose ``str()`` is one line,
``"PATH:LINE: MESSAGE"`` (or ``"PATH: MESSAGE"`` when no line applies), so a command can print
it without a traceback. ``path`` names the file (or a pseudo-file such as ``<trace>``), ``line``
is 1-based. The drawing and build packages derive their own errors from ``LocatedError``.
"""

from __future__ import annotations

#: Offending text longer than this is cut, so a 10 MB line never floods a message.
MAX_SHOWN = 80


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """Return ``text`` cut to ``limit`` characters with an ellipsis and the full length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


class LocatedError(Exception):
    """A located, one-line user error."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"

    def __reduce__(self) -> tuple[object, ...]:
        # Crossing a process boundary (a chart drawn in a worker) keeps the class and every
        # field, whatever arguments a subclass's constructor takes.
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


def _rebuilt(cls: type[LocatedError], args: tuple[object, ...],
             fields: dict[str, object]) -> LocatedError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(fields)
    return error


class TraceError(LocatedError):
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


class TracePathError(LocatedError):
    """A value path (``FORWARD.output``, ``STACK[4].residual``) that names nothing in the trace."""




class TraceWriteError(ValueError):
    """A result the trace cannot hold (NaN, an empty vector, a bad name, keys out of order).

    Raised by ``tracefile.writer``; the message names the record and key, so the engine can
    report it as its own error without a traceback.
    """
