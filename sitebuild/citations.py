"""Citations: the chapter's bibliography, kept as data and rendered by one function.

Role: publication years and arXiv identifiers are the only digits a page may show that do not
come from the trace. Keeping them in ``mkdocs.yml`` (``extra.references``) rather than typed
into Markdown means every page stays free of typed numbers, and every citation renders the
same way.

Contract:
- ``load_references(extra)`` validates ``extra["references"]``: a mapping from a key to an
  entry with the string fields ``authors``, ``title``, ``venue``, ``year`` and one of
  ``arxiv`` (an identifier) or ``url`` (an https address, for work not on arXiv). Anything
  else raises ``LocatedError`` naming ``mkdocs.yml`` and the entry.
- ``render_citation(references, key)`` returns ``<cite class="citation">…</cite>`` (HTML
  escaped, the title linked to the arXiv abstract page or the address); an unknown key raises
  ``LocatedError`` listing the known ones. The provenance audit exempts exactly this element.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from tracefile.errors import LocatedError

FIELDS = ("authors", "title", "venue", "year")
#: Where the work can be read: an arXiv identifier, or for work never posted there (a report,
#: an essay, a blog post) its address. Exactly one of the two.
LOCATORS = ("arxiv", "url")
_ARXIV = re.compile(r"[0-9]{4}\.[0-9]{4,5}")
_URL = re.compile(r"https://[^\s\"<>]+")


@dataclass(frozen=True)
class Reference:
    """One bibliography entry."""

    authors: str
    title: str
    venue: str
    year: str
    arxiv: str = ""
    url: str = ""


def load_references(extra: Mapping[str, Any]) -> dict[str, Reference]:
    """The validated bibliography from MkDocs' ``extra`` settings."""
    raw = extra.get("references", {})
    if not isinstance(raw, Mapping):
        raise LocatedError("mkdocs.yml", None, "extra.references must be a mapping of entries")
    return {str(key): _entry(str(key), value) for key, value in raw.items()}


def _entry(key: str, value: Any) -> Reference:
    where = f"extra.references.{key}"
    if not isinstance(value, Mapping) or not any(
            set(value) == {*FIELDS, locator} for locator in LOCATORS):
        got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
        raise LocatedError("mkdocs.yml", None, f"{where}: expected the fields "
                        f"{', '.join(FIELDS)} and one of {' or '.join(LOCATORS)}; got {got}")
    for name in value:
        # YAML reads an unquoted 1706.03760 as a float and drops its last zero.
        if not isinstance(value[name], str):
            raise LocatedError("mkdocs.yml", None, f"{where}.{name}: expected a quoted string; "
                            f"got {type(value[name]).__name__} {value[name]!r}")
    if "arxiv" in value and not _ARXIV.fullmatch(value["arxiv"]):
        raise LocatedError("mkdocs.yml", None, f"{where}.arxiv: expected an identifier like "
                        f"1512.03385; got {value['arxiv']!r}")
    if "url" in value and not _URL.fullmatch(value["url"]):
        raise LocatedError("mkdocs.yml", None, f"{where}.url: expected an https:// address; "
                        f"got {value['url']!r}")
    return Reference(**{name: value[name] for name in value})


def render_citation(references: Mapping[str, Reference], key: str) -> Markup:
    """The ``<cite>`` element for ``key``."""
    if key not in references:
        known = ", ".join(sorted(references)) or "none"
        raise LocatedError("<page>", None, f"unknown citation {key!r} (known: {known})")
    ref = references[key]
    if ref.url:
        return Markup(
            '<cite class="citation">{authors}, “<a href="{url}">{title}</a>”, {venue} {year}.'
            "</cite>"
        ).format(authors=ref.authors, title=ref.title, venue=ref.venue, year=ref.year,
                 url=ref.url)
    return Markup(
        '<cite class="citation">{authors}, “<a href="https://arxiv.org/abs/{arxiv}">{title}</a>”,'
        " {venue} {year}, arXiv:{arxiv}.</cite>"
    ).format(authors=ref.authors, title=ref.title, venue=ref.venue, year=ref.year,
             arxiv=ref.arxiv)
