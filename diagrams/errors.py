"""Errors of the drawing package."""

from __future__ import annotations

from tracefile.errors import LocatedError


class RenderError(LocatedError):
    """Graphviz missing or failing, or a template that cannot be rendered."""
