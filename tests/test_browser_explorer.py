"""The gradients lab in Debian's Chromium: the explorer moved with the keyboard shows, for every
cell it reaches, exactly the trace's values for that cell (desktop and phone width), each
opening its provenance; without JavaScript it still shows the chapter's cell and a short table
that links to the whole grid, and so does a page whose cells' script does not load; axe-core
finds no accessibility problem in the lab's content."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import site_support
from browser_support import (
    DESKTOP,
    PHONE,
    STOPS_PER_GROUP,
    open_every_fold,
    run_axe,
    set_scheme,
    visit,
)
from lab_support import LAB_PAGE, lab_traces
from test_browser import assert_no_content_violations

from diagrams.explorer import DATA_FILE
from diagrams.format import format_value
from tracefile import TraceSet

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SHOWN_CELL = ".gf-cell:not([hidden])"


@pytest.fixture(scope="module")
def site(built_site: Path) -> Path:
    return built_site


@pytest.fixture(scope="module")
def traces(site: Path) -> TraceSet:
    return lab_traces(site)


@pytest.fixture(scope="module")
def lab_url(site: Path) -> Iterator[str]:
    with site_support.serve(site) as url:
        yield url + LAB_PAGE


def cell_of(traces: TraceSet, factor: float, depth: int) -> int:
    trace = traces.traces["gradient-flow-v4"]
    return next(r.cell for r in trace.explorer if r.factor == factor and r.depth == depth)


def shown(tab: Any) -> dict[str, str]:
    """What the visible cell shows, value path → text, and how many cells are visible."""
    return tab.evaluate(
        """sel => {
            const cells = document.querySelectorAll(sel);
            const out = {"#visible": String(cells.length)};
            const counts = document.querySelectorAll('.gf-counts:not([hidden]) .tv');
            for (const span of [...cells[0].querySelectorAll('.tv'), ...counts])
                out[span.dataset.trace] = span.textContent;
            return out;
        }""", SHOWN_CELL)


def expected(traces: TraceSet, factor: float, depth: int) -> dict[str, str]:
    cell = f"gradient-flow-v4:EXPLORER[{cell_of(traces, factor, depth)}]"
    formats = {"factor": "exact", "depth": "exact", "plain": "sci", "residual": "sci",
               "contributions": "sci", "peak-length": "exact"}
    want = {f"{cell}.{key}": format_value(traces.resolve(f"{cell}.{key}"), fmt)
            for key, fmt in formats.items()}
    counts = f"gradient-flow-v4:PATH-COUNT[{depth}]"
    want[f"{counts}.depth"] = format_value(traces.resolve(f"{counts}.depth"))
    want[f"{counts}.counts"] = format_value(traces.resolve(f"{counts}.counts"))
    return {"#visible": "1", **want}


def press(tab: Any, control: str, key: str, times: int = 1) -> None:
    tab.focus(f"#gf-explorer-{control}")
    for _ in range(times):
        tab.keyboard.press(key)


def check_cell(tab: Any, traces: TraceSet, factor_index: int, depth: int) -> None:
    factors = traces.resolve("EXPLORER-CONFIG.factors")
    factor = factors[factor_index]
    assert shown(tab) == expected(traces, factor, depth), (factor, depth)
    summary = tab.locator(f"{SHOWN_CELL} .gf-cell__summary").text_content()
    assert tab.locator(".gf-explorer__live").text_content() == summary
    assert tab.get_attribute("#gf-explorer-factor", "aria-valuetext") == format_value(factor)
    assert tab.get_attribute("#gf-explorer-depth", "aria-valuetext") == format_value(depth)
    # The cell came from the data script: its spans still open their provenance, by keyboard,
    # one Tab stop per paragraph, list item or table of them (the arrow keys move within).
    assert tab.evaluate("""[...document.querySelectorAll('.gf-explorer__cells .tv')].every(
        span => span.dataset.provenance === span.dataset.trace + ' = '
                + (span.dataset.exact ?? span.textContent))""")
    stops = tab.evaluate(STOPS_PER_GROUP, ".gf-explorer__cells .tv")
    assert stops and set(stops) == {1}, stops
    assert check_curves(tab, depth) == {"factor": format_value(factor),
                                        "depth": format_value(depth),
                                        "shown": [str(factor_index)], "mark at depth": True}


def check_curves(tab: Any, depth: int) -> dict[str, Any]:
    """The values written beside the sliders, the drawings shown, and whether the depth's mark
    sits where the shown drawing lists that depth."""
    return tab.evaluate(
        """depth => {
            const shown = [...document.querySelectorAll("svg.gf-curves:not([hidden])")];
            const xs = JSON.parse(shown[0].getAttribute("data-x"));
            const mark = shown[0].querySelector(".gf-curves__mark");
            return {
                factor: document.querySelector("output[for=gf-explorer-factor]").textContent,
                depth: document.querySelector("output[for=gf-explorer-depth]").textContent,
                shown: shown.map(s => s.getAttribute("data-factor-index")),
                "mark at depth": Number(mark.getAttribute("x1")) === xs[String(depth)]
                    && shown[0].getBoundingClientRect().height > 0,
            };
        }""", depth)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_keyboard_moves_the_explorer_through_traced_cells(
        browser: Any, lab_url: str, traces: TraceSet, viewport: dict[str, int]) -> None:
    factors = traces.resolve("EXPLORER-CONFIG.factors")
    max_depth = traces.resolve("EXPLORER-CONFIG.max-depth")
    start_factor = factors.index(traces.resolve("CHAPTER-PATHS.branch-factor"))
    start_depth = traces.resolve("CHAPTER-PATHS.layers")
    with visit(browser, lab_url, viewport) as seen:
        tab = seen.page
        tab.locator("#gf-explorer-depth").scroll_into_view_if_needed()
        assert tab.locator(".gf-explorer__controls").is_visible()
        assert shown(tab) == expected(traces, factors[start_factor], start_depth)
        press(tab, "depth", "ArrowRight", 3)
        check_cell(tab, traces, start_factor, start_depth + 3)
        press(tab, "factor", "ArrowRight", 2)
        check_cell(tab, traces, start_factor + 2, start_depth + 3)
        press(tab, "depth", "End")
        check_cell(tab, traces, start_factor + 2, max_depth)
        press(tab, "factor", "Home")
        check_cell(tab, traces, 0, max_depth)
        press(tab, "depth", "Home")
        press(tab, "factor", "End")
        check_cell(tab, traces, len(factors) - 1, 1)
        press(tab, "depth", "ArrowLeft")  # already at the first depth: nothing changes
        check_cell(tab, traces, len(factors) - 1, 1)
        width = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"page is {width[0]}px wide in a {width[1]}px viewport"
        seen.assert_clean()


def test_without_javascript_the_chapters_cell_and_the_grid_remain(
        browser: Any, lab_url: str, traces: TraceSet) -> None:
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        tab = context.new_page()
        tab.goto(lab_url)
        assert not tab.locator(".gf-explorer__controls").is_visible()
        factor = traces.resolve("CHAPTER-PATHS.branch-factor")
        depth = traces.resolve("CHAPTER-PATHS.layers")
        assert shown(tab) == expected(traces, factor, depth)
        # A short table, every factor at the deepest depth, and the way to the whole grid.
        rows = tab.locator("table.gf-grid tbody tr")
        assert rows.count() == len(traces.resolve("EXPLORER-CONFIG.factors"))
        last = traces.resolve("EXPLORER-CONFIG.max-depth") - 1
        assert tab.locator("table.gf-grid tbody .tv").first.get_attribute(
            "data-trace").endswith("].factor")
        assert tab.locator("table.gf-grid tbody td .tv").first.get_attribute(
            "data-trace").endswith(f"].plain[{last}]")
        assert tab.locator(".gf-explorer__grid a").get_attribute("href") == (
            "../trace.html#gradient-flow-v4")
    finally:
        context.close()


def test_when_the_cells_do_not_load_the_page_keeps_its_own_cell(
        browser: Any, lab_url: str, traces: TraceSet) -> None:
    context = browser.new_context(viewport=PHONE)
    try:
        tab = context.new_page()
        refused = []
        tab.route(f"**/{DATA_FILE}", lambda route: (refused.append(route.request.url),
                                                    route.abort()))
        tab.goto(lab_url, wait_until="load")
        tab.wait_for_function("() => document.querySelector('[data-gf-explorer]')"
                              ".getAttribute('data-gf-ready') === 'loading'")
        assert len(refused) == 1
        assert not tab.locator(".gf-explorer__controls").is_visible()
        factor = traces.resolve("CHAPTER-PATHS.branch-factor")
        depth = traces.resolve("CHAPTER-PATHS.layers")
        assert shown(tab) == expected(traces, factor, depth)
        assert tab.locator("table.gf-grid tbody tr").count() == len(
            traces.resolve("EXPLORER-CONFIG.factors"))
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["default", "slate"])
def test_axe_finds_nothing_in_the_lab(browser: Any, lab_url: str, theme: str) -> None:
    with visit(browser, lab_url) as seen:
        tab = seen.page
        set_scheme(tab, theme)
        open_every_fold(tab)
        assert_no_content_violations(run_axe(tab))
        seen.assert_clean()
