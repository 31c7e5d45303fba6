"""The gradients lab page, built for real: it is in the navigation, every number on it passes
the provenance audit, its charts and explorer are there, and it stays a reasonable weight."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from lab_support import LAB_PAGE, check_verdict_rows, lab_traces
from site_support import BuiltSite

from diagrams import charts_gradient_flow
from sitebuild.gates.audit import audit_site
from tracefile import SCHEMAS

pytestmark = pytest.mark.slow

#: The light-pages goal: the explorer's grid, the wide drawings and the plotted values travel
#: in script files of their own, so the page stays under 600 KB (about 461 KB when measured).
PAGE_BUDGET = 600_000


@pytest.fixture(scope="module")
def built(site_build: BuiltSite) -> tuple[Path, str]:
    return site_build.site, site_build.stdout


def test_the_build_passes_its_gates_with_the_lab(built: tuple[Path, str]) -> None:
    _, output = built
    assert re.search(r"\[build\] gates\s+\S+\s+no findings", output), output


def test_the_audit_finds_nothing_on_any_page(built: tuple[Path, str]) -> None:
    site, _ = built
    assert [str(f) for f in audit_site(site, lab_traces(site))] == []


def test_the_lab_is_under_labs_in_the_navigation(built: tuple[Path, str]) -> None:
    site, _ = built
    index = (site / "index.html").read_text(encoding="utf-8")
    nav = index[index.index('<nav class="md-nav md-nav--primary"'):]
    assert re.search(r">\s*Labs\s*<", nav)
    assert 'href="labs/gradient-flow.html"' in nav


def test_the_page_shows_every_lab_chart_and_the_explorer(built: tuple[Path, str]) -> None:
    site, _ = built
    page = (site / LAB_PAGE).read_text(encoding="utf-8")
    wide = (site / "assets/charts/gradient-flow-v4.js").read_text(encoding="utf-8")
    values = (site / "assets/charts/gradient-flow-v4-values.js").read_text(encoding="utf-8")
    for chart in charts_gradient_flow.CHARTS:
        # (a figure inside a fold has its attributes in another order)
        assert re.search(rf'<figure class="residual-chart"[^>]* id="{chart.name}"', page), \
            chart.name
        # The page holds the phone drawing; the wide one waits in the trace's chart script.
        assert f'data-diagram="{chart.name}-narrow"' in page, f"{chart.name}: no SVG"
        assert f'data-diagram=\\"{chart.name}\\"' in wide, f"{chart.name}: no wide SVG"
        assert f'data-chart=\\"{chart.name}\\"' in values, f"{chart.name}: no values table"
    assert page.count("data-gf-explorer") == 1
    assert "explorer.js" in page and "lab.css" in page
    # The page's own trace: unqualified paths on the page resolve in gradient-flow-v4.
    assert 'data-trace="gradient-flow-v4:TEN-LAYERS[0.1].plain"' in page


def test_the_page_weight_stays_within_budget(built: tuple[Path, str]) -> None:
    site, _ = built
    size = (site / LAB_PAGE).stat().st_size
    assert size < PAGE_BUDGET, f"{LAB_PAGE} is {size} bytes"


def test_a_published_lab_trace_that_disagrees_with_the_page_is_caught(
        built: tuple[Path, str], tmp_path: Path) -> None:
    site, _ = built
    copy = Path(shutil.copytree(site, tmp_path / "site"))
    published = copy / "trace" / "gradient-flow-v4.trace"
    text = published.read_text(encoding="utf-8")
    published.write_text(text.replace("band=10.0", "band=20.0"), encoding="utf-8")
    findings = [f for f in audit_site(copy, lab_traces(copy)) if f.page == LAB_PAGE]
    assert findings and all("TEN-LAYERS-CONFIG.band" in f.message for f in findings)


def test_each_verdict_row_gives_the_numbers_that_decided_it(built: tuple[Path, str]) -> None:
    site, _ = built
    check_verdict_rows((site / LAB_PAGE).read_text(encoding="utf-8"),
                       len(SCHEMAS["gradient-flow-v4"].claims))
