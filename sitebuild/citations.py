"""Citations: the bibliography, kept as data in ``mkdocs.yml`` (``extra.references``) and
rendered by one function, so that publication years never appear typed into a page.

Contract: ``project_references(root)`` reads ``extra.references`` from ``root/mkdocs.yml``
(unknown YAML tags load as None, never executed) and ``load_references(extra)`` validates each
entry (the string fields ``authors``, ``title``, ``venue``, ``year`` and one of ``arxiv`` or an
https ``url``); a problem is a ``LocatedError`` naming ``mkdocs.yml``. ``render_citation
(references, key)`` is ``<cite class="citation">…</cite>`` (escaped, the title linked); an
unknown key lists the known ones. The audit exempts exactly the HTML of
``rendered_citations(references)`` from its number check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from markupsafe import Markup

from sitebuild.errors import GateError
from sitebuild.paths import ROOT
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


class _Loader(yaml.SafeLoader):
    """SafeLoader that reads unknown tags (MkDocs' `!ENV`, `!!python/...`) as None."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def project_references(root: Path = ROOT) -> dict[str, Reference]:
    """The validated bibliography of the project at `root`."""
    path = root / "mkdocs.yml"
    try:
        config: Any = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except OSError as err:
        raise GateError(str(path), None, f"cannot read the bibliography: "
                        f"{err.strerror or err}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise GateError(str(path), line, f"not valid YAML: {' '.join(str(err).split())}") \
            from None
    extra = config.get("extra") if isinstance(config, Mapping) else None
    return load_references(extra if isinstance(extra, Mapping) else {})


def rendered_citations(references: Mapping[str, Reference]) -> frozenset[str]:
    """The exact HTML of every citation the bibliography can render."""
    return frozenset(str(render_citation(references, key)) for key in references)
