"""Playwright plumbing for the real-browser gate (tests/test_browser.py).

Contract: `launch()` starts Debian's Chromium (`/usr/bin/chromium`, never a Playwright
download) headless and offline-minded; when Chromium, Playwright or axe-core is missing it
fails the test under CI (`CI=true`) and skips it elsewhere. `visit()` opens one page in a fresh
browser context and records every request, every console error, page error, failed request
and HTTP error; requests to any host but 127.0.0.1 are recorded and aborted, never sent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
#: The narrowest phones in common use.
NARROW_PHONE = {"width": 360, "height": 780}

#: The figures and tables of a page's article that a reader would scroll sideways to read at
#: the screen's width ``w``: wider than it, or starting or ending past its edges (a table
#: narrower than the screen may still begin at the text's margin and end off screen). The one
#: exception: a chart's table of plotted values scrolls in its own region, which must fit.
PAST_THE_EDGES = """w => [...new Set([...document.querySelectorAll(
        'article svg, article table, article .diagram-scroll, article figure')]
    .map(e => e.closest('details.chart-values [role=region]') || e))]
    .filter(e => e.getClientRects().length > 0)
    .map(e => { const box = e.getBoundingClientRect();
                return [e.tagName, e.getAttribute('data-diagram') || e.className.baseVal
                        || e.className, Math.round(box.width), e.scrollWidth,
                        Math.round(box.left), Math.round(box.right), e.getAttribute('role')]; })
    .filter(([, , box, scroll, left, right, role]) => box > w || left < 0 || right > w
                                                      || (scroll > w && role !== 'region'))"""

#: The words of Markdown tables' cells that the browser laid out over two lines (letters only:
#: a line may end at a hyphen or a <wbr>, and a traced number is kept whole by its own rule).
BROKEN_WORDS = """() => {
    const broken = [];
    for (const cell of document.querySelectorAll(
            'article table:not([class]) th, article table:not([class]) td')) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const word of node.data.matchAll(/[A-Za-z]{2,}/g)) {
                const range = document.createRange();
                range.setStart(node, word.index);
                range.setEnd(node, word.index + word[0].length);
                const lines = new Set([...range.getClientRects()].filter(r => r.width > 0)
                                      .map(r => Math.round(r.top)));
                if (lines.size > 1) broken.push(word[0]);
            }
        }
    }
    return broken;
}"""


#: The traced numbers of a page's article that the browser laid out over more than one line,
#: wrapped inside themselves ("1.63 × 1 / 0⁰"): a value, an item of a list (data-list),
#: which may break between its items, or a number inside a name (data-name: "openblas-0.3").
#: Open every folded block first (``open_every_fold``), so folded tables count too.
WRAPPED_VALUES = """() => {
    const wrapped = [];
    for (const value of document.querySelectorAll('article .tv')) {
        const node = value.firstChild;
        if (!node || node.nodeType !== Node.TEXT_NODE) continue;
        const items = value.hasAttribute('data-name')
            ? [...node.data.matchAll(/[0-9]+(?:[.][0-9]+)*/g)]
            : value.hasAttribute('data-list')
                ? [...node.data.matchAll(/[^,]+(?:, |$)/g)] : [...node.data.matchAll(/.+/gs)];
        for (const match of items) {
            const item = match[0].replace(/, $/, "");
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + item.length);
            const lines = new Set([...range.getClientRects()].filter(r => r.width > 0)
                                  .map(r => Math.round(r.top)));
            if (lines.size > 1) wrapped.push(item);
        }
    }
    return wrapped;
}"""


#: A plot area shorter than this on a phone is too cramped to read (issue "Pages a reader
#: finishes"); the narrow drawings are made for it.
PLOT_MIN_HEIGHT = 180

#: For the traced numbers a selector (the argument) finds: how many Tab stops each group of
#: them has (paragraph, list item, table, figure..., as docs/assets/js/provenance.js groups
#: them); a roving tab index gives each group exactly one.
STOPS_PER_GROUP = """selector => { const groups = new Map();
    document.querySelectorAll(selector).forEach(e => {
        const g = e.closest('table, figure, p, li, dd, dt, summary, h1, h2, h3, h4, h5, h6')
            || e.parentElement;
        groups.set(g, (groups.get(g) || 0) + (e.tabIndex === 0)); });
    return [...groups.values()]; }"""


#: The headings of a page's article taller than their own text by half a line or more: an
#: empty band under the words (a permanent-link mark wrapped to a line of its own).
EMPTY_BANDS = """() => [...document.querySelectorAll('article :is(h1, h2, h3, h4)')]
    .filter(h => h.getClientRects().length).filter(h => {
        const rects = [];  // the lines of the heading's own words, its link mark left out
        const walk = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
        while (walk.nextNode()) {
            if (walk.currentNode.parentElement.closest('.headerlink')) continue;
            const words = document.createRange();
            words.selectNodeContents(walk.currentNode);
            rects.push(...[...words.getClientRects()].filter(r => r.width > 0));
        }
        if (!rects.length) return false;
        const height = Math.max(...rects.map(r => r.bottom)) - Math.min(...rects.map(r => r.top));
        const style = getComputedStyle(h);
        const inner = h.getBoundingClientRect().height - parseFloat(style.paddingTop)
            - parseFloat(style.paddingBottom);
        return inner - height >= parseFloat(style.lineHeight) / 2;
    }).map(h => h.textContent.trim())"""


#: The charts of a page's article whose shown drawing has a plot area under PLOT_MIN_HEIGHT
#: pixels tall, or a label (tick, axis or series name) drawn outside the drawing's box; and
#: the explorer's shown curves, a plot area edge to edge, when they are drawn lower than that.
CRAMPED_CHARTS = f"""() => [...document.querySelectorAll('article svg.gf-curves')]
    .filter(svg => svg.getClientRects().length)
    .map(svg => Math.round(svg.getBoundingClientRect().height))
    .filter(h => h < {PLOT_MIN_HEIGHT}).map(h => ['explorer curves', h + 'px plot'])
    .concat([...document.querySelectorAll('article figure.residual-chart')]
    .flatMap(figure => {{
        const svg = [...figure.querySelectorAll('svg')].find(s => s.getClientRects().length);
        if (!svg) return [[figure.id, 'no drawing shown']];
        const box = svg.getBoundingClientRect();
        // Each axes' first patch is its background, the plot area (the others are spines).
        const plots = [...svg.querySelectorAll('g[id*="-axes_"]')]
            .map(axes => axes.querySelector(':scope > g[id*="-patch_"] path'))
            .filter(Boolean).map(path => Math.round(path.getBoundingClientRect().height));
        const outside = [...svg.querySelectorAll('text')].filter(text => {{
            const r = text.getBoundingClientRect();
            return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1
                                   || r.top < box.top - 1 || r.bottom > box.bottom + 1); }});
        return [...(plots.length ? [] : [[figure.id, 'no plot area found']]),
                ...plots.filter(h => h < {PLOT_MIN_HEIGHT}).map(h => [figure.id, h + 'px plot']),
                ...(outside.length ? [[figure.id, outside.length + ' labels outside']] : [])];
    }}))"""


def open_every_fold(tab: Any) -> None:
    """Open every folded block of the article, as a reader's click does, and wait until the
    folds a script fills (a chart's plotted values, a raw trace) hold what it puts there."""
    folds = tab.locator("article details")
    for i in range(folds.count()):
        fold = folds.nth(i)
        if not fold.evaluate("d => d.open"):
            fold.locator("summary").first.click()
        assert fold.evaluate("d => d.open"), f"fold {i} did not open"
    tab.wait_for_function("""() => [...document.querySelectorAll(
        'article details[data-shown-html-fragment]')].every(d => d.hasAttribute('data-filled'))""")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Fail under CI (the browser gate must never be skipped there), skip elsewhere."""
    if in_ci():
        pytest.fail(f"browser gate cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def launch() -> Iterator[Any]:
    """Yield a headless Chromium `Browser` driven by Playwright."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        unavailable("Python Playwright is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    if not AXE.is_file():
        unavailable(f"{AXE} is missing (npm ci)")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
        except Error as err:
            unavailable(f"Chromium did not start: {err}")
        try:
            yield browser
        finally:
            browser.close()


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or parts.hostname == "127.0.0.1"


@dataclass
class Visit:
    """One page opened in its own context, with everything the page asked for or complained."""

    page: Any
    requests: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.external == [], f"requests to other hosts: {self.external}"
        assert self.problems == [], "console errors or failed requests:\n" + "\n".join(
            self.problems
        )


def _watch(context: Any, visit: Visit) -> None:
    def route(route: Any) -> None:
        if is_local(route.request.url):
            route.continue_()
        else:
            visit.external.append(route.request.url)
            route.abort()

    def on_console(message: Any) -> None:
        if message.type == "error":
            visit.problems.append(f"console error: {message.text} ({message.location})")

    def on_failed(request: Any) -> None:
        if is_local(request.url):
            visit.problems.append(f"request failed: {request.url} ({request.failure})")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            visit.problems.append(f"HTTP {response.status}: {response.url}")

    context.route("**/*", route)
    context.on("request", lambda request: visit.requests.append(request.url))
    context.on("requestfailed", on_failed)
    context.on("response", on_response)
    context.on("console", on_console)
    context.on("weberror", lambda error: visit.problems.append(f"page error: {error.error}"))


@contextmanager
def visit(browser: Any, url: str, viewport: dict[str, int] = DESKTOP,
          touch: bool = False) -> Iterator[Visit]:
    """Open `url` in a fresh context (empty storage, light system theme) and record it;
    ``touch`` emulates a touch screen (taps, no hover)."""
    context = browser.new_context(
        viewport=viewport, color_scheme="light", service_workers="block", locale="en-US",
        has_touch=touch, is_mobile=touch,
    )
    context.set_default_timeout(15_000)
    record = Visit(page=None)
    _watch(context, record)
    try:
        record.page = context.new_page()
        record.page.goto(url, wait_until="networkidle")
        yield record
    finally:
        context.close()


def scheme(page: Any) -> str:
    return page.evaluate("document.body.getAttribute('data-md-color-scheme')") or ""


def toggle_palette(page: Any) -> str:
    """Click the visible palette toggle; returns the new colour scheme once it has changed."""
    before = scheme(page)
    toggle = page.locator("form[data-md-component=palette] label:visible")
    assert toggle.count() == 1, f"expected one visible palette toggle, found {toggle.count()}"
    toggle.first.click()
    page.wait_for_function(
        "before => document.body.getAttribute('data-md-color-scheme') !== before", arg=before
    )
    return scheme(page)


def set_scheme(page: Any, wanted: str) -> None:
    """Click the palette toggle until the page shows colour scheme `wanted`."""
    for _ in range(4):
        if scheme(page) == wanted:
            return
        toggle_palette(page)
    raise AssertionError(f"palette toggle never reached scheme {wanted!r} (at {scheme(page)!r})")


def run_axe(page: Any) -> list[dict[str, Any]]:
    """axe-core violations on the page: rule id, impact, help and node targets."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        targets: v.nodes.map(n => n.target.join(' '))}))"""
    )
