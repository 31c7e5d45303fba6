"""The decoder lab's page in Debian's Chromium (served from the session's build on 127.0.0.1):
in light and dark, at phone and desktop width, axe-core finds no violation in its content,
every chart is drawn with a nonzero size, every folded table and answer opens, and at a
phone's width nothing is wider than the screen or needs sideways scrolling inside its
wrapper (code listings scroll by design and are left out)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import DESKTOP, PHONE, open_every_fold, run_axe, scheme, set_scheme, visit
from site_support import serve
from test_browser import assert_no_content_violations

from diagrams import charts_residual_stream

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PAGE = "labs/residual-stream.html"
THEMES = {"light": "default", "dark": "slate"}
VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
#: What must fit the screen: figures, their SVG, tables, and every wrapper that could scroll.
FITS = ("article figure, article svg, article table, article .diagram-scroll, "
        "article .md-typeset__scrollwrap, article .md-typeset__table, article details")


@pytest.fixture(scope="module")
def page_url(built_site: Path) -> Iterator[str]:
    with serve(built_site) as url:
        yield url + PAGE


@pytest.fixture(scope="session")
def stream_screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stream-page-screenshots")


def too_wide(tab: Any) -> list[Any]:
    """Elements wider than the viewport, or whose content overflows them sideways; a chart's
    table of plotted values scrolls in its own region, which must itself fit."""
    return tab.evaluate(
        """([selector, width]) => [...document.querySelectorAll(selector)]
            .filter(e => e.getClientRects().length > 0)
            .map(e => [e, e.closest('details.chart-values [role=region]')])
            .filter(([e, region]) => region === null || region === e)
            .map(([e, region]) => [e.tagName, e.id || e.getAttribute('data-diagram') || '',
                       Math.round(e.getBoundingClientRect().width), e.scrollWidth,
                       e.clientWidth, region !== null])
            .filter(([, , box, scroll, client, scrolls]) =>
                box > width || (!scrolls && client > 0 && scroll > client + 1))""",
        [FITS, tab.evaluate("window.innerWidth")])


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_lab_page_reads_well(browser: Any, page_url: str, stream_screenshots: Path,
                                 viewport: str, theme: str) -> None:
    with visit(browser, page_url, viewport=VIEWPORTS[viewport]) as seen:
        tab = seen.page
        set_scheme(tab, THEMES[theme])
        # Some charts are in view with every fold closed; the rest wait in folds.
        assert tab.locator("article svg.residual-plot:visible").count() > 0
        open_every_fold(tab)
        # Each chart shows one drawing, the one drawn for the screen's width.
        charts = tab.locator("article svg.residual-plot:visible")
        assert charts.count() == len(charts_residual_stream.CHARTS)
        for i in range(charts.count()):
            box = charts.nth(i).bounding_box()
            assert box and box["width"] > 0 and box["height"] > 0, f"chart {i}: {box}"
        tab.screenshot(path=str(stream_screenshots / f"stream-{viewport}-{theme}.png"),
                       full_page=True)
        assert_no_content_violations(run_axe(tab))
        if viewport == "phone":
            width = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"page is {width[0]}px wide in {width[1]}px"
            assert too_wide(tab) == []
        assert scheme(tab) == THEMES[theme]
        seen.assert_clean()


def test_a_table_too_wide_for_a_phone_is_caught(browser: Any, page_url: str) -> None:
    with visit(browser, page_url, viewport=PHONE) as seen:
        tab = seen.page
        tab.evaluate("""() => {
            const cell = document.querySelector('article table:not(.chart-values) td');
            cell.textContent = 'x'.repeat(200); cell.style.whiteSpace = 'nowrap'; }""")
        assert too_wide(tab) != []
