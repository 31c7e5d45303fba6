"""Errors of the build package: gates that cannot run and failed build phases."""

from __future__ import annotations

from tracefile.errors import LocatedError


class GateError(LocatedError):
    """A site gate that cannot run at all (no site folder, an unreadable page or mkdocs.yml).

    What a gate finds wrong in a readable site is a ``Finding``, not an exception."""


class BuildError(LocatedError):
    """A failed build phase; ``path`` names the file or the phase.

    Takes the message before the (optional) line, as build code mostly has no line.
    """

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        super().__init__(path, line, message)
