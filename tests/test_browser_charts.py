"""The labs' charts in Debian's Chromium: a page holds each chart's phone-width drawing, a
screen as wide as a tablet or wider shows its wide drawing instead (from the charts' script
file), narrowing the window puts the phone-width one back, and without JavaScript every
screen keeps the phone-width drawing; a chart's fold of plotted values is filled when it
opens, each value opening its provenance, and without JavaScript it links to the raw trace;
the Trace page's folds show each raw trace whole, or without JavaScript link to its file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import site_support
from browser_support import DESKTOP, PHONE, visit

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PAGES = ("labs/gradient-flow.html", "labs/residual-stream.html")
#: Each chart's id and the drawing it shows.
DRAWN = """() => [...document.querySelectorAll('article figure.residual-chart')].map(
    f => [f.id, [...f.querySelectorAll('svg.residual-plot')].map(
        s => s.getAttribute('data-diagram'))])"""


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    with site_support.serve(built_site) as url:
        yield url


def drawn(tab: Any, suffix: str) -> list[list[Any]]:
    """The charts that do not show exactly their own drawing named with ``suffix``."""
    charts = tab.evaluate(DRAWN)
    assert len(charts) > 5
    return [[name, svgs] for name, svgs in charts if svgs != [name + suffix]]


@pytest.mark.parametrize("page", PAGES)
def test_a_wide_screen_shows_the_wide_drawings_and_a_narrowed_one_the_phone_ones(
        browser: Any, site_url: str, page: str) -> None:
    with visit(browser, site_url + page, DESKTOP) as seen:
        tab = seen.page
        tab.wait_for_function("""() => [...document.querySelectorAll('.chart-drawing')]
            .every(d => d.getAttribute('data-drawn') === 'wide')""")
        assert drawn(tab, "") == []
        tab.set_viewport_size(PHONE)
        tab.wait_for_function("() => !document.querySelector('.chart-drawing[data-drawn]')")
        assert drawn(tab, "-narrow") == []
        tab.set_viewport_size(DESKTOP)
        tab.wait_for_function("() => !document.querySelector('.chart-drawing:not([data-drawn])')")
        assert drawn(tab, "") == []
        seen.assert_clean()


def test_a_phone_never_loads_the_wide_drawings(browser: Any, site_url: str) -> None:
    with visit(browser, site_url + PAGES[0], PHONE) as seen:
        tab = seen.page
        loaded = tab.evaluate("() => performance.getEntriesByType('resource').map(r => r.name)")
        assert not [url for url in loaded if "/assets/charts/" in url]
        assert drawn(tab, "-narrow") == []
        seen.assert_clean()


def test_without_javascript_a_wide_screen_keeps_the_phone_drawings(
        browser: Any, site_url: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        tab = context.new_page()
        tab.goto(site_url + PAGES[1])
        assert drawn(tab, "-narrow") == []
        # The page's first chart in view (not in a closed fold) shows its phone drawing.
        assert tab.locator("article svg.residual-plot:visible").count() > 0
    finally:
        context.close()


def test_opening_a_fold_puts_its_plotted_values_there(browser: Any, site_url: str) -> None:
    with visit(browser, site_url + PAGES[0], PHONE) as seen:
        tab = seen.page
        fold = tab.locator("article details.chart-values").first
        assert fold.locator("table").count() == 0
        fold.locator("summary").click()
        fold.locator("table.chart-values").wait_for()
        chart = fold.evaluate("d => d.closest('figure').id")
        assert fold.locator("table").get_attribute("data-chart") == chart
        cells = fold.locator("td.tv")
        assert cells.count() > 10
        # Each opens its provenance; the table is one Tab stop, the arrow keys move within it.
        assert cells.evaluate_all("""cells => cells.every(c => c.dataset.provenance
            === c.dataset.trace + ' = ' + (c.dataset.exact ?? c.textContent))""")
        stops = fold.locator("table .tv").evaluate_all("cells => cells.map(c => c.tabIndex)")
        assert sorted(stops) == [-1] * (len(stops) - 1) + [0]
        seen.assert_clean()


def test_without_javascript_a_fold_links_to_the_raw_trace(browser: Any, site_url: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        tab = context.new_page()
        tab.goto(site_url + PAGES[1])
        fold = tab.locator("article details.chart-values:visible").first
        fold.locator("summary").click()
        link = fold.locator(".shown-html__place a")
        assert link.is_visible() and link.get_attribute("href") == (
            "../trace.html#residual-stream-v4")
    finally:
        context.close()


def test_the_trace_pages_folds_show_each_raw_trace_and_link_to_it_without_javascript(
        browser: Any, site_url: str, built_site: Path) -> None:
    with visit(browser, site_url + "trace.html", PHONE) as seen:
        tab = seen.page
        folds = tab.locator("article details[data-shown-html^='trace:']")
        assert folds.count() == len(list((built_site / "trace").glob("*.trace")))
        for i in range(folds.count()):
            fold = folds.nth(i)
            trace_id = fold.get_attribute("data-shown-html").removeprefix("trace:")
            fold.locator("summary").click()
            fold.locator("pre code").wait_for()
            shown = fold.locator("pre code").text_content()
            assert shown == (built_site / "trace" / f"{trace_id}.trace").read_text()
        seen.assert_clean()
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        tab = context.new_page()
        tab.goto(site_url + "trace.html")
        hrefs = tab.locator("article details .shown-html__place a").evaluate_all(
            "links => links.map(a => a.getAttribute('href'))")
        assert sorted(hrefs) == sorted(f"trace/{path.name}"
                                       for path in (built_site / "trace").glob("*.trace"))
    finally:
        context.close()
