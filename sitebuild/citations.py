"""Citations: the chapter's bibliography, kept as data and rendered by one function.

Role: publication years and arXiv identifiers are the only digits a page may show that do not
come from the trace. Keeping them in ``mkdocs.yml`` (``extra.references``) rather than typed
into Markdown means every page stays free of typed numbers, and every citation renders the
same way.

Contract:
- ``load_references(extra)`` validates ``extra["references"]``: a mapping from a key to an
  entry with the string fields ``authors``, ``title``, ``venue``, ``year`` and ``arxiv``.
  Anything else raises ``LocatedError`` naming ``mkdocs.yml`` and the entry.
- ``render_citation(references, key)`` returns ``<cite class="citation">…</cite>`` (HTML
  escaped, the title linked to the arXiv abstract page); an unknown key raises ``LocatedError``
  listing the known ones. The provenance audit exempts exactly this element.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from tracefile.errors import LocatedError

FIELDS = ("authors", "title", "venue", "year", "arxiv")
_ARXIV = re.compile(r"[0-9]{4}\.[0-9]{4,5}")


@dataclass(frozen=True)
class Reference:
    """One bibliography entry."""

    authors: str
    title: str
    venue: str
    year: str
    arxiv: str


def load_references(extra: Mapping[str, Any]) -> dict[str, Reference]:
    """The validated bibliography from MkDocs' ``extra`` settings."""
    raw = extra.get("references", {})
    if not isinstance(raw, Mapping):
        raise LocatedError("mkdocs.yml", None, "extra.references must be a mapping of entries")
    return {str(key): _entry(str(key), value) for key, value in raw.items()}


def _entry(key: str, value: Any) -> Reference:
    where = f"extra.references.{key}"
    if not isinstance(value, Mapping) or set(value) != set(FIELDS):
        got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
        raise LocatedError("mkdocs.yml", None, f"{where}: expected the fields "
                        f"{', '.join(FIELDS)}; got {got}")
    for name in FIELDS:
        # YAML reads an unquoted 1706.03760 as a float and drops its last zero.
        if not isinstance(value[name], str):
            raise LocatedError("mkdocs.yml", None, f"{where}.{name}: expected a quoted string; "
                            f"got {type(value[name]).__name__} {value[name]!r}")
    if not _ARXIV.fullmatch(value["arxiv"]):
        raise LocatedError("mkdocs.yml", None, f"{where}.arxiv: expected an identifier like "
                        f"1512.03385; got {value['arxiv']!r}")
    return Reference(**{name: value[name] for name in FIELDS})


def render_citation(references: Mapping[str, Reference], key: str) -> Markup:
    """The ``<cite>`` element for ``key``."""
    if key not in references:
        known = ", ".join(sorted(references)) or "none"
        raise LocatedError("<page>", None, f"unknown citation {key!r} (known: {known})")
    ref = references[key]
    return Markup(
        '<cite class="citation">{authors}, “<a href="https://arxiv.org/abs/{arxiv}">{title}</a>”,'
        " {venue} {year}, arXiv:{arxiv}.</cite>"
    ).format(authors=ref.authors, title=ref.title, venue=ref.venue, year=ref.year,
             arxiv=ref.arxiv)
