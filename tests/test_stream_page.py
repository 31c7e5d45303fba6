"""The decoder lab's page, docs/labs/residual-stream.md, in the session's build (golden traces,
--build-dir, --out and a shared --cache-dir in pytest's temporary folders): it is built, it
sits under Labs in the navigation, the provenance audit finds nothing on it, and it carries
every chart of the lab, its tables and its source listings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lab_support import check_verdict_rows
from site_support import BuiltSite, published_traces

from diagrams import charts_residual_stream
from sitebuild.gates.audit import audit_site
from tracefile.schemas.stream_claims import CLAIMS

pytestmark = pytest.mark.slow

PAGE = "labs/residual-stream.html"
TRACE = "residual-stream-v4"
#: The light-pages goal: the wide drawings and the plotted values travel in script files of
#: their own, so the page stays under 600 KB (about 428 KB when measured).
PAGE_BUDGET = 600_000
#: The functions of the named source regions the page includes (the block forward of
#: engine/nn/blocks.py, the rest from engine/experiments/residual_stream/), as the
#: highlighter marks a function's name.
LISTINGS = ("forward", "exit_point", "pruning", "quantize", "lost_fraction", "flops", "_holder",
            "shortcut_matrix")


@pytest.fixture(scope="module")
def page(built_site: Path) -> str:
    return (built_site / PAGE).read_text(encoding="utf-8")


def test_the_build_with_the_page_passes_its_gates(site_build: BuiltSite) -> None:
    assert (site_build.site / PAGE).is_file()
    assert re.search(r"\[build\] gates\s+\S+\s+no findings", site_build.stdout), site_build.stdout


def test_the_audit_finds_nothing_on_the_page(built_site: Path, drawn: dict[str, str]) -> None:
    findings = [str(f) for f in audit_site(built_site, published_traces(built_site, TRACE),
                                           rendered=drawn)
                if PAGE in str(f)]
    assert findings == []


def test_the_page_is_under_labs_in_the_navigation(built_site: Path) -> None:
    index = (built_site / "index.html").read_text(encoding="utf-8")
    nav = index[index.index('<nav class="md-nav md-nav--primary"'):]
    assert re.search(r">\s*Labs\s*<", nav)
    assert f'href="{PAGE}"' in nav


def test_every_number_on_the_page_names_a_value_of_a_trace(page: str) -> None:
    spans = re.findall(r'<span class="tv" data-trace="([^"]+)"', page)
    assert len(spans) > 300
    # Unqualified paths on the page resolve in the page's own trace (its front matter).
    assert {span.partition(":")[0] for span in spans} == {TRACE}
    assert f'data-trace="{TRACE}:CORPUS.unigram"' in page


def test_the_page_shows_every_chart_with_its_values(built_site: Path, page: str) -> None:
    wide = (built_site / f"assets/charts/{TRACE}.js").read_text(encoding="utf-8")
    values = (built_site / f"assets/charts/{TRACE}-values.js").read_text(encoding="utf-8")
    for chart in charts_residual_stream.CHARTS:
        # (a figure inside a fold has its attributes in another order)
        assert re.search(rf'<figure class="residual-chart"[^>]* id="{chart.name}"', page), \
            chart.name
        # The page holds the phone drawing; the wide one waits in the trace's chart script.
        assert f'data-diagram="{chart.name}-narrow"' in page, f"{chart.name}: no SVG"
        assert f'data-diagram=\\"{chart.name}\\"' in wide, f"{chart.name}: no wide SVG"
        assert f'data-chart=\\"{chart.name}\\"' in values, f"{chart.name}: no values table"


def test_the_page_includes_its_source_listings(page: str) -> None:
    for name in LISTINGS:
        assert f'<span class="nf">{name}</span>' in page, name
    assert "--8&lt;--" not in page and "--8<--" not in page


def test_the_exercises_fold_their_answers(page: str) -> None:
    exercises = page[page.index('id="exercises"'):]
    assert exercises.count('<details class="question" open="open">') >= 4
    assert exercises.count('<details class="success">') >= 4


def test_the_page_weight_stays_within_budget(built_site: Path) -> None:
    size = (built_site / PAGE).stat().st_size
    assert size < PAGE_BUDGET, f"{PAGE} is {size} bytes"


def test_demonstrations_stand_apart_from_the_claims_the_runs_test(page: str) -> None:
    def claims_in(table: str) -> set[str]:
        start = page.index(f'id="table-{table}"')
        rows = page[start:page.index("</table>", start)]
        return set(re.findall(r'data-trace="residual-stream-v4:CLAIM\[([a-z-]+)\]\.verdict"',
                              rows))

    demonstrations = {claim.key for claim in CLAIMS if claim.construction}
    assert {"stream-is-sum", "add-is-cheap"} <= demonstrations
    assert claims_in("demonstrations") == demonstrations
    assert claims_in("verdicts") == {claim.key for claim in CLAIMS} - demonstrations


def test_each_verdict_row_gives_the_numbers_that_decided_it(page: str) -> None:
    check_verdict_rows(page, len([claim for claim in CLAIMS if not claim.construction]))
