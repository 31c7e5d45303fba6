"""Provenance audit (gate name "audit"): every number a reader sees comes from a trace.

Contract, over the article of every built page: each ``.tv`` element shows
``format_value(trace.resolve(data-trace), data-format)``, the stored value (``data-exact``
where it shows another, else its text: what the popover names) and in ``data-what`` the
words ``trace.describe(data-trace)`` gives; any
other number or verdict word a reader sees or hears (text, code, math, ``READER_ATTRS``) is a
finding. Exempt by structure only: code listings, scripts and styles, a citation or a package
version exactly as ``sitebuild.citations`` renders it, a verdict term or a claim's rule exactly
as ``diagrams.words`` renders it, a figure's, table's or equation's number, or a reference to
one, in step with the page's numbering (``sitebuild.numbering``). Diagrams: ``gates.figures``.
A typeset formula is read as its TeX (the annotation of its MathML); its drawn HTML and MathML
are the same formula. HTML a page's script shows in place of its own (the fragments of the
script file a ``data-shown-html-src`` names: the explorer's cells, the charts' wide drawings)
is audited fragment by fragment, as article; a file that cannot be read is a finding.
(Footnotes are not enabled: their numbers would be findings.) The page
around the article (navigation, ``<title>``, the meta description), from ``mkdocs.yml``,
holds no number at all: a finding there names ``mkdocs.yml``.
"""

from __future__ import annotations

import dataclasses
import functools
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from diagrams.format import format_value, number_tokens
from diagrams.shown_html import read_shown_html_script
from diagrams.words import claim_changes, claim_rule, verdict_term
from sitebuild.citations import Reference, is_rendered_pin, project_references, rendered_citations
from sitebuild.gates.figures import ExpectedDiagrams, SvgText, compare_svg, svg_text
from sitebuild.gates.pages import (
    READER_ATTRS,
    SHOWN_ATTRS,
    VOID_ELEMENTS,
    Finding,
    attr,
    class_list,
    html_pages,
    is_listing_code,
)
from sitebuild.numbering import numbered_html
from tracefile import SCHEMAS, Trace, TraceSet
from tracefile.claims import VERDICTS
from tracefile.errors import LocatedError, shorten
from tracefile.values import trace_repr

GATE = "audit"
HIDDEN_TAGS = frozenset({"script", "style", "template"})  # never displayed
CONTEXT = 20  # characters shown on each side of an untagged number
THEME_PAGES = frozenset({"404.html"})  # rendered from Material's template, not from docs/
VERDICT_WORD = re.compile(rf"\b(?:{'|'.join(VERDICTS)})\b", re.IGNORECASE)
#: Elements whose exact rendering may hold what prose may not: (tag, class).
#: The page around the article (navigation, title, description) comes from mkdocs.yml.
CHROME = "around the article (mkdocs.yml's site_name, site_description or nav)"
CHROME_SOURCE = "mkdocs.yml"
VETTED = frozenset({("cite", "citation"), ("code", "pinned"), ("dfn", "verdict-term"),
                    ("span", "claim-rule"), ("span", "claim-change"), ("span", "element-number"),
                    ("a", "element-ref")})


def audit_site(site_dir: Path, traces: Trace | TraceSet,
               references: Mapping[str, Reference] | None = None,
               rendered: Mapping[str, str] | None = None) -> list[Finding]:
    """Audit every HTML page under `site_dir` against the traces and the bibliography
    (`references`; default: the project's `mkdocs.yml` `extra.references`)."""
    refs = project_references() if references is None else references
    citations, diagrams = rendered_citations(refs), ExpectedDiagrams(traces, rendered)
    citations |= rendered_terms()
    findings: list[Finding] = []
    chrome: set[str] = set()  # the chrome repeats on every page: each finding once
    for page, text in html_pages(site_dir):
        for finding in audit_page(page, text, traces, diagrams, citations, site_dir):
            if finding.source != CHROME_SOURCE or finding.message not in chrome:
                findings.append(finding)
                chrome.add(finding.message)
    return findings


def rendered_terms() -> frozenset[str]:
    """The exact HTML of every verdict term, of every declared claim's rule and of every
    earlier rule its verdict changelog shows."""
    claims = [claim for schema in SCHEMAS.values() for claim in schema.claims]
    rules = {str(claim_rule(claim)) for claim in claims}
    changes = {str(change) for claim in claims for change in claim_changes(claim)}
    return frozenset({*rules, *changes, *(str(verdict_term(word)) for word in VERDICTS)})


def audit_page(page: str, html: str, trace: Trace | TraceSet,
               diagrams: ExpectedDiagrams | None = None,
               citations: frozenset[str] = frozenset(),
               site_dir: Path | None = None) -> list[Finding]:
    """Audit one page's HTML (`citations`: the exact HTML of every accepted citation; the
    HTML its scripts show is read from `site_dir`)."""
    parser = _AuditParser(page, html, trace, diagrams or ExpectedDiagrams(trace),
                          citations | numbered_html(html))
    parser.feed(html)
    parser.close()
    findings = parser.finish(prose=page not in THEME_PAGES)
    lines: dict[tuple[str, str], int] = {}  # each file once, at the first element naming it
    for shown in _SHOWN_HTML.finditer(html):
        lines.setdefault((shown.group(1), shown.group(2)), html.count("\n", 0, shown.start()) + 1)
    for (name, url), line in lines.items():
        findings += _audit_shown_html(page, name, url, line, site_dir, trace, diagrams,
                                      citations)
    return findings


#: HTML a page's own script shows in place of what the page holds (the explorer's cells, the
#: charts' wide drawings): fragments in a script file the element names, filed under a name
#: (``diagrams.shown_html``).
_SHOWN_HTML = re.compile(r'\bdata-shown-html="([^"]*)" data-shown-html-src="([^"]*)"')


def _audit_shown_html(page: str, name: str, url: str, line: int, site_dir: Path | None,
                      trace: Trace | TraceSet, diagrams: ExpectedDiagrams | None,
                      citations: frozenset[str]) -> list[Finding]:
    """Audit every fragment of the script at `url` (from `page`), filed under `name`, as
    article text; a finding is placed at the naming element's line and names the fragment."""
    file = posixpath.normpath(posixpath.join(posixpath.dirname(page), url))
    path = None if site_dir is None or file.startswith("../") else site_dir / file
    try:
        if path is None or not path.is_file():
            raise ValueError("no such file in the site")
        filed, fragments = read_shown_html_script(path.read_text(encoding="utf-8"))
        if filed != name:
            raise ValueError(f"it files its HTML under {filed!r}, not {name!r}")
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return [Finding(page, line, GATE, f"the HTML a script shows ({url}) cannot be read: "
                        f"{err}")]
    findings = []
    for group, of in fragments.items():
        for key, html in of.items():
            article = f'<article class="md-content__inner md-typeset">{html}</article>'
            for finding in audit_page(page, article, trace, diagrams, citations):
                findings.append(dataclasses.replace(
                    finding, line=line, message=f"{finding.message} (in the HTML a script "
                    f"shows, {file} {group}[{key}])"))
    return findings


@dataclass
class _Frame:
    tag: str
    classes: frozenset[str] = frozenset()
    in_article: bool = False
    hidden: bool = False  # not read as prose: scripts, styles, code listings
    # Inside a typeset formula's MathML: whether the formula itself is hidden (else None).
    in_math: bool | None = None


@dataclass
class _TracedSpan:
    path: str | None
    fmt: str
    exact: str | None  # data-exact: the stored value, when the span shows it otherwise
    line: int
    parts: list[str] = field(default_factory=list)
    what: str | None = None  # data-what: the value in words


@dataclass
class _Chunk:
    """Text to scan for numbers; `offset` into the article text, or None for an attribute."""

    line: int
    text: str
    offset: int | None
    where: str = "article text"


@dataclass
class _Citation:
    """A vetted element being read: a citation (`cite`) or a package version (`code`)."""

    start: int  # offset of its start tag in the page
    depth: int
    tag: str
    chunks: list[_Chunk] = field(default_factory=list)


class _AuditParser(HTMLParser):
    """Walks one page keeping, per open element, whether its text is audited and how."""

    def __init__(self, page: str, html: str, trace: Trace | TraceSet, diagrams: ExpectedDiagrams,
                 citations: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.page, self.html, self.trace = page, html, trace
        self.diagrams, self.citations = diagrams, citations
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", html)]
        self.stack: list[_Frame] = [_Frame("#root"), _Frame("#root")]
        self.span: _TracedSpan | None = None
        self.span_depth = 0
        self.svg: SvgText | None = None
        self.svg_depth = 0
        self.cite: _Citation | None = None
        self.text: list[str] = []  # all article text, to quote context around a finding
        self.text_len = 0
        self.chunks: list[_Chunk] = []
        self.chrome: list[_Chunk] = []  # the text and attributes around the article
        self.findings: list[Finding] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent, grand, line = self.stack[-1], self.stack[-2], self.getpos()[0]
        classes = class_list(attrs)
        frame = _Frame(tag, classes, parent.in_article or (
            tag == "article" and "md-content__inner" in classes))
        if not frame.in_article:
            frame.hidden = parent.hidden or tag in HIDDEN_TAGS
            self._chrome_attrs(frame, attrs, line)
        elif self.svg is not None:
            self.svg.start(tag, attrs, line)
        elif tag == "svg":
            self.svg, self.svg_depth = svg_text(attrs, line), len(self.stack)
        else:
            # A typeset formula is audited as its TeX (MathML's annotation), which KaTeX drew
            # as the HTML and the MathML beside it.
            frame.in_math = parent.hidden if "katex-mathml" in classes else parent.in_math
            if frame.in_math is not None:
                frame.hidden = frame.in_math or tag != "annotation"
            else:
                frame.hidden = parent.hidden or tag in HIDDEN_TAGS or "katex-html" in classes \
                    or is_listing_code(tag, (parent.tag, parent.classes),
                                       (grand.tag, grand.classes))
            self._open(frame, attrs, line)
        if tag not in VOID_ELEMENTS:
            self.stack.append(frame)

    def _open(self, frame: _Frame, attrs: list[tuple[str, str | None]], line: int) -> None:
        """Start a traced span or a citation, and scan the reader-visible attributes."""
        opens_span = "tv" in frame.classes and self.span is None
        if opens_span:
            fmt = attr(attrs, "data-format") or "exact"
            self.span = _TracedSpan(attr(attrs, "data-trace"), fmt, attr(attrs, "data-exact"),
                                    line, what=attr(attrs, "data-what"))
            self.span_depth = len(self.stack)
        vetted = any(frame.tag == tag and name in frame.classes for tag, name in VETTED)
        if vetted and self.cite is None:
            row, col = self.getpos()
            self.cite = _Citation(self.line_starts[row - 1] + col, len(self.stack), frame.tag)
        if frame.hidden:
            return
        present = {name for name, _ in attrs}  # most tags have none of the names below
        for name in (*READER_ATTRS, *SHOWN_ATTRS.get(frame.tag, ())):
            if name not in present:
                continue
            value = attr(attrs, name)
            if not value:
                continue
            self._pending(_Chunk(line, value, None, f"the {name} attribute of <{frame.tag}>"))

    def _chrome_attrs(self, frame: _Frame, attrs: list[tuple[str, str | None]],
                      line: int) -> None:
        """The reader-visible attributes of the page around the article, and its description
        (which search engines show)."""
        if frame.hidden:
            return
        names = READER_ATTRS + (("content",) if frame.tag == "meta" and attr(
            attrs, "name") == "description" else ())
        for name in names:
            if value := attr(attrs, name):
                self.chrome.append(_Chunk(line, value, None, f"the {name} attribute of "
                                          f"<{frame.tag}> {CHROME}"))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 1, -1):
            if self.stack[depth].tag == tag:
                break
        else:
            return
        del self.stack[depth:]
        if self.svg is not None:
            if len(self.stack) <= self.svg_depth:
                self.findings.extend(compare_svg(self.page, self.svg, self.diagrams))
                self.svg = None
            else:
                self.svg.end(tag)
        if self.span is not None and len(self.stack) <= self.span_depth:
            self._check_span(self.span)
            self.span = None
        if self.cite is not None and len(self.stack) <= self.cite.depth:
            cite, self.cite = self.cite, None  # its chunks now go to the page's list
            self._close_citation(cite, closed_here=tag == cite.tag and depth == cite.depth)

    def handle_data(self, data: str) -> None:
        frame, line = self.stack[-1], self.getpos()[0]
        if not frame.in_article:
            if not frame.hidden and data.strip():
                self.chrome.append(_Chunk(line, data, None, f"the text {CHROME}"))
            return
        if self.svg is not None:
            self.svg.data(data, line)
            return
        offset = self.text_len
        self.text.append(data)
        self.text_len += len(data)
        if self.span is not None:
            self.span.parts.append(data)
        elif not frame.hidden:
            self._pending(_Chunk(line, data, offset))

    def _pending(self, chunk: _Chunk) -> None:
        (self.cite.chunks if self.cite is not None else self.chunks).append(chunk)

    def _close_citation(self, cite: _Citation, closed_here: bool) -> None:
        """Accept a vetted element exactly as the site renders it; audit any other like
        prose."""
        if closed_here:
            row, col = self.getpos()
            end = self.html.find(">", self.line_starts[row - 1] + col) + 1
            if self.html[cite.start:end] in self.citations or is_rendered_pin(
                    self.html[cite.start:end]):
                return
        for chunk in cite.chunks:
            chunk.where += (" of a citation, version, verdict term or rule not rendered by the "
                            "site (from mkdocs.yml, requirements/lock.txt or the trace contract)")
            self._pending(chunk)

    def finish(self, prose: bool = True) -> list[Finding]:
        """Report untagged numbers and verdict words (when `prose`), quoting the article text
        around them."""
        full = "".join(self.text)
        for chunk in self.chrome:
            for _, token, what in _untraced(chunk.text):
                self._report(chunk.line, f"{what} {token!r} in {chunk.where}: "
                             f"“{shorten(' '.join(chunk.text.split()))}”", (token,), CHROME_SOURCE)
        for chunk in self.chunks if prose else ():
            for at, token, what in _untraced(chunk.text):
                if chunk.offset is None:
                    context = chunk.text
                else:
                    where = chunk.offset + at
                    context = full[max(0, where - CONTEXT) : where + len(token) + CONTEXT]
                self._report(chunk.line + chunk.text.count("\n", 0, at),
                             f"{what} {token!r} in {chunk.where}: "
                             f"“{shorten(' '.join(context.split()))}”", (token,))
        return sorted(self.findings, key=Finding.sort_key)

    def _check_span(self, span: _TracedSpan) -> None:
        shown = "".join(span.parts)
        # The page source names the value by its path (``tv("KIND.key")``).
        needles = (span.path.partition(":")[2] or span.path,) if span.path else ()
        report = functools.partial(self._report, needles=needles)
        if not span.path:
            report(span.line, f"traced value {shown!r} has no data-trace path")
            return
        try:
            value = self.trace.resolve(span.path)
            expected = format_value(value, span.fmt)
            qualified = self.trace.qualified(span.path)
            described = self.trace.describe(span.path)
        except LocatedError as err:
            report(span.line, f"traced value {span.path!r}: {err.message}")
            return
        except (ValueError, TypeError) as err:
            report(span.line, f"traced value {span.path!r} format {span.fmt!r}: {err}")
            return
        if qualified != span.path:
            report(span.line, f"traced value {span.path!r} does not name its trace "
                         f"(expected data-trace {qualified!r})")
        if span.what != described:
            report(span.line, f"traced value {span.path!r} says in words {span.what!r}, the "
                              f"trace's schema says {described!r}")
        if shown != expected:
            report(span.line, f"traced value {span.path!r} ({span.fmt}) shows "
                         f"{shown!r}, the trace gives {expected!r}")
        stored = trace_repr(value)
        if span.exact is not None and span.exact == shown:
            report(span.line, f"traced value {span.path!r} repeats what it shows in "
                         f"data-exact {span.exact!r}: write data-exact only when it differs")
        elif span.exact is not None and span.exact != stored:
            report(span.line, f"traced value {span.path!r} gives its stored value as "
                         f"data-exact {span.exact!r}, the trace stores {stored!r}")
        elif span.exact is None and shown == expected != stored:
            # A wrong shown value is reported above; here the display is right but rounded.
            report(span.line, f"traced value {span.path!r} shows {shown!r} with no data-exact"
                         f", the trace stores {stored!r}")

    def _report(self, line: int | None, message: str, needles: tuple[str, ...] = (),
                source: str | None = None) -> None:
        self.findings.append(Finding(self.page, line, GATE, message, source=source,
                                     needles=needles))


def _untraced(text: str) -> list[tuple[int, str, str]]:
    """(offset, token, what) of every number and verdict word in ``text``."""
    found, pos = [], 0
    for token in number_tokens(text):
        at = max(text.find(token, pos), pos)  # as number_tokens spells it
        pos = at + len(token)
        found.append((at, token, "untagged number"))
    found += [(m.start(), m.group(0), "untraced verdict") for m in VERDICT_WORD.finditer(text)]
    return sorted(found)
