"""What a page cites: works from the bibliography (``mkdocs.yml``'s ``extra.references``) and
package versions from the lock (``requirements/lock.txt``), each rendered by one function, so
no year or version is ever typed into a page; the audit accepts exactly what they render.

Contract: ``project_references(root)`` is the validated bibliography (read by
``generator.read_settings``), ``render_citation(references, key)`` a ``<cite class="citation">``;
``parse_lock(text)`` every pin of the lock, ``pinned(root, name)`` the installed version, which
the lock must pin, and ``render_pin`` its ``<code class="pinned">``. Problems are located
errors naming ``mkdocs.yml`` or the lock.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from string import ascii_lowercase
from typing import Any

from markupsafe import Markup

from sitebuild.errors import BuildError
from sitebuild.generator import read_settings
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
    label: str = ""  # in the text: "He et al. 2016a" (``_labelled``)


def load_references(extra: Mapping[str, Any]) -> dict[str, Reference]:
    """The validated bibliography from MkDocs' ``extra`` settings."""
    raw = extra.get("references", {})
    if not isinstance(raw, Mapping):
        raise LocatedError("mkdocs.yml", None, "extra.references must be a mapping of entries")
    return _labelled({str(key): _entry(str(key), value) for key, value in raw.items()})


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
    """The in-text citation of ``key``: its label, a link to the page's References entry,
    and the entry itself as the text of its preview (``data-preview``)."""
    ref = _known(references, key)
    locator = ref.url or f"arXiv:{ref.arxiv}"
    return Markup(
        '<cite class="citation"><a class="citation-ref" href="#ref-{key}" data-preview="{authors}'
        ' ({year}). {title}. {venue}. {locator}">({label})</a></cite>'
    ).format(key=key, authors=ref.authors, year=ref.year, title=ref.title, venue=ref.venue,
             locator=locator, label=ref.label)


def render_reference(references: Mapping[str, Reference], key: str) -> Markup:
    """The full entry of ``key``, as the References section lists it."""
    ref = _known(references, key)
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


def references_section(references: Mapping[str, Reference], keys: Iterable[str]) -> str:
    """The Markdown of a page's References section: every work in ``keys``, by label."""
    cited = sorted(set(keys), key=lambda key: (references[key].label, key))
    if not cited:
        return ""
    rows = "".join(f'<li id="ref-{key}">{render_reference(references, key)}</li>\n'
                   for key in cited)
    return f'\n\n## References\n\n<ul class="references">\n{rows}</ul>\n'


class PageCitations:
    """A page's ``cite(key)``, which remembers what the page cited for its References."""

    def __init__(self, references: Mapping[str, Reference]) -> None:
        self.references, self.cited = references, dict[str, None]()

    def __call__(self, key: str) -> Markup:
        html = render_citation(self.references, key)
        self.cited.setdefault(key)
        return html

    def section(self) -> str:
        return references_section(self.references, self.cited)


def _known(references: Mapping[str, Reference], key: str) -> Reference:
    if key not in references:
        known = ", ".join(sorted(references)) or "none"
        raise LocatedError("<page>", None, f"unknown citation {key!r} (known: {known})")
    return references[key]


def short_authors(authors: str) -> str:
    """The authors as an in-text label names them: one or two surnames, else the first and
    "et al." ("Kaiming He, Xiangyu Zhang, Shaoqing Ren and Jian Sun": "He et al.")."""
    names = [name for name in re.split(r",\s*|\s+and\s+", authors.removesuffix(" et al."))
             if name.strip()]
    surnames = [name.split()[-1] for name in names]
    if authors.endswith(" et al.") or len(surnames) > 2:
        return f"{surnames[0]} et al."
    return " and ".join(surnames)


def _labelled(references: dict[str, Reference]) -> dict[str, Reference]:
    """Each entry with its label, "He et al. 2016"; works sharing one get a letter after the
    year in bibliography order ("2016a", "2016b")."""
    plain = {key: f"{short_authors(ref.authors)} {ref.year}" for key, ref in references.items()}
    shared = Counter(plain.values())
    used: Counter[str] = Counter()
    labelled = {}
    for key, ref in references.items():
        label = plain[key]
        if shared[label] > 1:
            used[label] += 1
            label += ascii_lowercase[used[label] - 1]
        labelled[key] = replace(ref, label=label)
    return labelled


def project_references(root: Path = ROOT) -> dict[str, Reference]:
    """The validated bibliography of the project at `root`."""
    extra = read_settings(root).get("extra")
    return load_references(extra if isinstance(extra, Mapping) else {})


def rendered_citations(references: Mapping[str, Reference]) -> frozenset[str]:
    """The exact HTML of every citation the bibliography can render, in the text and in a
    References section."""
    return frozenset(str(render(references, key)) for key in references
                     for render in (render_citation, render_reference))


LOCK = "requirements/lock.txt"
PIN_HTML = re.compile(r'<code class="pinned" data-lock="([a-z0-9-]+)">[^<]*</code>')
_PIN = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==(?P<version>[^\s;\\]+)"
    r"\s*(?:;\s*(?P<marker>[^\\]+?))?\s*\\?\s*"
)


def normalize(name: str) -> str:
    """A distribution name in PEP 503 form: ``PyYAML`` and ``pyyaml`` are the same package."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    name: str  # normalized
    version: str
    marker: str | None  # None: the pin holds everywhere
    line: int


def parse_lock(text: str, origin: str = "lock") -> list[Pin]:
    """Every pin of a lock, in file order. Anything that is neither a pin, a continuation line
    (hashes), a comment nor blank is an error: the lock must pin every package exactly."""
    pins = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or (raw[:1].isspace() and line.startswith("--hash=")):
            continue
        match = _PIN.fullmatch(line)
        if match is None:
            raise ValueError(f"{origin}:{number}: expected 'name==version', got {line!r}")
        pins.append(Pin(normalize(match["name"]), match["version"], match["marker"], number))
    return pins


def pinned(root: Path, name: str) -> str:
    """The installed version of ``name``, which the lock must pin."""
    path = root / LOCK
    try:
        pins = parse_lock(path.read_text(encoding="utf-8"), LOCK)
    except (OSError, ValueError) as err:
        raise BuildError(LOCK, f"cannot read the lock: {err}") from None
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        raise BuildError(LOCK, f"{name} is not installed") from None
    if not any(pin.name == normalize(name) and pin.version == version for pin in pins):
        raise BuildError(LOCK, f"{name} {version} is installed but not pinned by the lock; "
                         "reinstall from it (rm -r .venv && ./dev setup)")
    return version


def render_pin(name: str, version: str) -> Markup:
    return Markup('<code class="pinned" data-lock="{}">{}</code>').format(normalize(name),
                                                                       version)


def is_rendered_pin(html: str) -> bool:
    """A package version exactly as ``render_pin`` writes it for the installed and
    locked version of the package it names."""
    found = PIN_HTML.fullmatch(html)
    if found is None:
        return False
    try:
        return html == str(render_pin(found[1], pinned(ROOT, found[1])))
    except LocatedError:
        return False
