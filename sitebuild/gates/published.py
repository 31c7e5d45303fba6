"""Published trace (gate name "trace"): what the site offers as a trace is the trace checked.

Contract: every trace's ``trace/<file>`` in the site and its listing on the Trace page (in the
page, or in the HTML its script shows in a fold) equal the checked trace byte for byte; a
difference is a finding at its first differing line with the unified diff as ``detail``. So a
site and its trace tampered together still differ from the engine's run (``build_site.py
check``).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from pathlib import Path

from diagrams.shown_html import read_shown_html_script
from sitebuild.gates.pages import Finding, code_listings, read_text
from sitebuild.paths import trace_url
from tracefile import Trace, TraceSet
from tracefile.errors import shorten

GATE = "trace"
TRACE_PAGE = "trace.html"
DIFF_LINES = 60  # a diff longer than this is cut: the first lines locate the problem
#: The script file an element of the Trace page (at the site's root) names.
_SHOWN_SRC = re.compile(r'\bdata-shown-html-src="([^"/.][^"]*)"')


def check_published(site_dir: Path, traces: Trace | TraceSet) -> list[Finding]:
    """Every trace's published copy and raw listing on the Trace page, against the trace."""
    found: list[Finding] = []
    for trace in traces if isinstance(traces, TraceSet) else (traces,):
        found += published_copy(site_dir, trace) + trace_page(site_dir, trace)
    return found


def published_copy(site_dir: Path, trace: Trace) -> list[Finding]:
    """The site's downloadable trace must be byte-identical to `trace`."""
    page = trace_url(trace.trace_id)
    path = site_dir / page
    if not path.is_file():
        return [Finding(page, None, GATE, f"the published trace is missing (the Trace page "
                        f"links to it); expected a copy of {trace.path}")]
    data = path.read_bytes()
    if data == trace.text.encode("utf-8"):
        return []
    published = data.decode("utf-8", errors="replace")
    return [_mismatch(page, 1, "published trace", trace, published)]


def trace_page(site_dir: Path, trace: Trace) -> list[Finding]:
    """The Trace page must show the trace text exactly in one of its code listings."""
    path = site_dir / TRACE_PAGE
    if not path.is_file():
        return [Finding(TRACE_PAGE, None, GATE, "the Trace page is missing, so the raw trace "
                        "is not shown")]
    html = read_text(path)
    listings = [(line, text, None) for line, text in code_listings(html)]
    listings += _shown_listings(site_dir, html)
    if any(text == trace.text for _, text, _ in listings):
        return []
    header = trace.text.split("\n", 1)[0]
    like = [item for item in listings if item[1].split("\n", 1)[0] == header]
    if not like:
        return [Finding(TRACE_PAGE, None, GATE, f"no code listing shows the raw trace (none "
                        f"starts with {shorten(header)!r})")]
    line, text, file = like[0]
    if file is None:
        return [_mismatch(TRACE_PAGE, line, "raw trace listing", trace, text)]
    # Placed at the fold naming the file: the file's own lines are not the page's.
    found = _mismatch(TRACE_PAGE, line, f"raw trace listing (shown from {file})", trace, text)
    return [dataclasses.replace(found, line=line)]


def _shown_listings(site_dir: Path, html: str) -> list[tuple[int, str, str]]:
    """The code listings of the HTML the Trace page's script shows in its folds (the raw
    traces: ``diagrams.shown_html``), each with the line of the element naming its file and
    the file; a file that cannot be read gives none (and the audit names it)."""
    found = []
    for match in _SHOWN_SRC.finditer(html):
        line = html.count("\n", 0, match.start()) + 1
        try:
            _, fragments = read_shown_html_script(
                (site_dir / match.group(1)).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        found += [(line, text, match.group(1)) for of in fragments.values()
                  for fragment in of.values() for _, text in code_listings(fragment)]
    return found


def _mismatch(page: str, first_line: int, what: str, trace: Trace, shown: str) -> Finding:
    """A finding at the first line where `shown` leaves `trace.text`, with the diff."""
    want, got = trace.text.splitlines(keepends=True), shown.splitlines(keepends=True)
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b),
              min(len(want), len(got)))
    expected = want[at].rstrip("\n") if at < len(want) else "(end of trace)"
    found = got[at].rstrip("\n") if at < len(got) else "(end of text)"
    diff = list(difflib.unified_diff(want, got, fromfile=f"{trace.path} (checked)",
                                     tofile=f"{page} ({what})", n=1))
    if len(diff) > DIFF_LINES:
        diff = [*diff[:DIFF_LINES], f"... ({len(diff) - DIFF_LINES} more diff lines)\n"]
    message = (f"{what} differs from the checked trace {trace.path} at its line {at + 1}: "
               f"shows {shorten(found)!r}, the trace has {shorten(expected)!r}")
    detail = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
    return Finding(page, first_line + at, GATE, message, detail=detail.rstrip("\n"))
