"""Links and anchors, checked offline on the built HTML (gate name "links").

Contract: every site-internal URL of a page or stylesheet resolves to a file of the site, and a
``#fragment`` to an ``id`` there (an ``id`` defined twice is a finding); everything the browser
fetches by itself (images, scripts, styles, frames, CSS ``url()``, refreshes, script imports)
is site-local. Root-relative URLs resolve under the site's path, and the 404 page, served at
any depth, may hold no other local kind; external navigation links are allowed and never
fetched. A finding names the Markdown line holding the link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from sitebuild.gates.pages import Finding, attr, html_pages, read_text
from tracefile.errors import shorten

GATE = "links"
#: The page a host answers in place of any missing one, at any depth: its links must be
#: root-relative (MkDocs writes them from site_url's path).
ERROR_PAGE = "404.html"
URL_ATTRS = ("href", "src", "srcset", "poster", "data", "xlink:href")
# <link rel=...> values whose target the browser fetches on its own.
FETCHED_RELS = frozenset({
    "stylesheet", "icon", "shortcut", "apple-touch-icon", "mask-icon", "manifest",
    "preload", "prefetch", "modulepreload", "preconnect", "dns-prefetch",
})
SKIPPED_SCHEMES = frozenset({"mailto", "tel", "javascript", "data", "blob", "about"})
CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""")
# <meta http-equiv="refresh" content="5; url=target">: the browser goes there by itself.
REFRESH_URL = re.compile(r"""^\s*[0-9.]*\s*[;,]?\s*(?:url\s*=\s*)?(['"]?)(.*?)\1\s*$""",
                         re.IGNORECASE | re.DOTALL)
# Module specifiers of static and dynamic imports (and re-exports) in an inline script.
SCRIPT_IMPORT = re.compile(
    r"""\bimport\s*\(\s*(['"`])(.+?)\1"""  # import("url")
    r"""|\b(?:import|export)\b[^'"`;()]*?\bfrom\s*(['"])(.+?)\3"""  # import x from "url"
    r"""|\bimport\s*(['"])(.+?)\5"""  # import "url"
)
# Specifiers a browser resolves as URLs (bare names like "katex" need an import map).
URL_SPECIFIER = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//|/|\./|\.\./)")


@dataclass(frozen=True)
class LinkRef:
    """One URL found in a page: where, what, and whether the browser fetches it itself."""

    page: str
    line: int
    url: str
    resource: bool


def source_needles(url: str) -> tuple[str, ...]:
    """How a built link may read in its Markdown source: as built, with ``.md`` for ``.html``
    (MkDocs rewrites page links), or its bare ``#fragment``."""
    path, hashmark, fragment = url.partition("#")
    as_markdown = (path[: -len(".html")] + ".md" if path.endswith(".html") else path)
    needles = [url, as_markdown + hashmark + fragment]
    if fragment:
        needles.append(f"#{fragment}")
    return tuple(dict.fromkeys(n for n in needles if n))


def check_links(site_dir: Path, base: str = "/") -> list[Finding]:
    """Check every reference of every page and stylesheet under `site_dir`."""
    anchors: dict[str, frozenset[str]] = {}
    references: list[LinkRef] = []
    findings: list[Finding] = []
    for page, text in html_pages(site_dir):
        parser = _LinkParser(page)
        parser.feed(text)
        parser.close()
        anchors[page] = frozenset(parser.ids)
        references.extend(parser.references)
        findings.extend(parser.findings)
    for css in sorted(site_dir.rglob("*.css")):
        references.extend(css_references(site_dir, css))
    for ref in references:
        problem = check_reference(site_dir, anchors, ref, base)
        if problem:
            findings.append(Finding(ref.page, ref.line, GATE, problem,
                                    needles=source_needles(ref.url)))
    return sorted(findings, key=Finding.sort_key)


def css_references(site_dir: Path, css: Path) -> list[LinkRef]:
    """Every `url(...)` and `@import` of a stylesheet: all are resources."""
    page, text = css.relative_to(site_dir).as_posix(), read_text(css)
    return [LinkRef(page, text.count("\n", 0, match.start()) + 1,
                    (match.group(2) or match.group(4) or "").strip(), resource=True)
            for match in CSS_URL.finditer(text)]


def check_reference(site_dir: Path, anchors: dict[str, frozenset[str]], ref: LinkRef,
                    base: str = "/") -> str:
    """Why `ref` is broken, or "" when it is fine. ``base`` is the path the site is served
    under (``/sub/`` for ``https://host/sub/``): a root-relative URL must start with it."""
    parts = urlsplit(ref.url.strip())
    if parts.scheme.lower() in SKIPPED_SCHEMES:
        return ""
    if parts.scheme or parts.netloc:
        if ref.resource:
            return f"external resource {shorten(ref.url)!r}: the site must make no external request"
        return ""  # navigation away from the site is allowed and not fetched
    path = unquote(parts.path)
    if ref.page == ERROR_PAGE and path and not path.startswith("/"):
        return (f"link {shorten(ref.url)!r} is relative, but the host answers {ERROR_PAGE} in "
                "place of a missing page at any depth, where a relative link misses: it must "
                "start with the site's path")
    if path.startswith("/"):
        if not path.startswith(base):
            return (f"link {shorten(ref.url)!r} leaves the site, which is served under "
                    f"{base!r}")
        path = "/" + path[len(base):]
    target = _target(ref.page, path)
    if target is None:
        return f"link {shorten(ref.url)!r} leaves the site"
    file = site_dir / target
    if file.is_dir():
        target = (PurePosixPath(target) / "index.html").as_posix()
        file = site_dir / target
    if not file.is_file():
        return f"broken link {shorten(ref.url)!r}: no file {target} in the site"
    fragment = unquote(parts.fragment)
    if fragment and target in anchors and fragment not in anchors[target]:
        return f"broken anchor {shorten(ref.url)!r}: no id {fragment!r} in {target}"
    return ""


def _target(page: str, path: str) -> str | None:
    """The site-relative file a URL path points to from `page`, or None if outside the site."""
    if not path:
        return page
    base = PurePosixPath() if path.startswith("/") else PurePosixPath(page).parent
    parts: list[str] = list(base.parts)
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or "."


class _LinkParser(HTMLParser):
    """Collects one page's ids and URL references."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.ids: dict[str, int] = {}
        self.references: list[LinkRef] = []
        self.findings: list[Finding] = []
        self.raw: str | None = None  # "style" or "script" while inside one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        self._anchor(attr(attrs, "id"), line)
        if tag == "a":
            self._anchor(attr(attrs, "name"), line, duplicate_ok=True)
        resource = _is_resource(tag, attrs)
        present = {name for name, _ in attrs}  # most tags have none of the names below
        for name in URL_ATTRS:
            if name not in present:
                continue
            value = attr(attrs, name)
            if (name == "data" and tag != "object") or not (value or "").strip():
                continue  # only <object data> is a URL
            urls = [value] if name != "srcset" else [  # "url [descriptor], ..."
                item.split()[0] for item in value.split(",") if item.strip()]
            for url in urls:
                self.references.append(LinkRef(self.page, line, url, resource))
        self._scan(CSS_URL, attr(attrs, "style") or "", line)
        if tag == "meta" and (attr(attrs, "http-equiv") or "").lower() == "refresh":
            target = REFRESH_URL.match(attr(attrs, "content") or "")
            if target and target.group(2).strip():
                self.references.append(LinkRef(self.page, line, target.group(2), True))
        if tag == "style" or (tag == "script" and _is_javascript(attrs)):
            self.raw = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self.raw:
            self.raw = None

    def handle_data(self, data: str) -> None:
        if self.raw is not None:
            self._scan(CSS_URL if self.raw == "style" else SCRIPT_IMPORT, data, self.getpos()[0])

    def _scan(self, pattern: re.Pattern[str], text: str, line: int) -> None:
        """Every URL `pattern` finds in `text` (starting on `line`) is a resource."""
        for match in pattern.finditer(text):
            url = next(group for group in match.groups()[1::2] if group is not None).strip()
            if pattern is SCRIPT_IMPORT and not URL_SPECIFIER.match(url):
                continue  # a bare module name is not a URL the browser would fetch
            at = line + text.count("\n", 0, match.start())
            self.references.append(LinkRef(self.page, at, url, resource=True))

    def _anchor(self, name: str | None, line: int, duplicate_ok: bool = False) -> None:
        if not name:
            return
        if name in self.ids and not duplicate_ok:
            self.findings.append(Finding(self.page, line, GATE, f"duplicate id {name!r} (first "
                                         f"on line {self.ids[name]})"))
        self.ids.setdefault(name, line)


def _is_resource(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    """Whether the browser fetches this element's URL without a click."""
    if tag == "a" or tag == "area":
        return False
    if tag == "link":
        rels = set((attr(attrs, "rel") or "").lower().split())
        return bool(rels & FETCHED_RELS)
    return True


def _is_javascript(attrs: list[tuple[str, str | None]]) -> bool:
    """Whether a `<script>` runs (JSON data blocks such as Material's config do not)."""
    kind = (attr(attrs, "type") or "").strip().lower()
    return kind in ("", "module", "text/javascript", "application/javascript")

