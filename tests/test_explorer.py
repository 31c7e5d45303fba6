"""diagrams/explorer.py: the gradients lab's explorer, rendered from the trace.

A small corner of the grid, fragment and data script, is held against a golden file
(tests/golden/explorer-corner.html, one tag per line so a change is a readable diff); the
whole grid is checked for structure and passed through the provenance audit, which must find
nothing.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from golden_support import assert_drawing_matches_golden
from paths import GOLDEN_DIR, RECORDS_DIR

from diagrams.errors import RenderError
from diagrams.explorer import DATA_FILE, DATA_NAME, DATA_URL, render_explorer, render_explorer_data
from diagrams.shown_html import read_shown_html_script, shown_html_script
from sitebuild.gates.audit import audit_page
from tracefile import SCHEMAS, Trace, TraceSet, load_trace

GOLDEN_TRACE = RECORDS_DIR / "gradient-flow-v4.trace"
CORNER = GOLDEN_DIR / "explorer-corner.html"
#: The corner: the chapter's stack (its factor and depth) and its neighbours.
CORNER_FACTORS = (-1.0, -0.25)
CORNER_DEPTHS = (3, 4)


@pytest.fixture(scope="module")
def trace() -> Trace:
    return load_trace(GOLDEN_TRACE, SCHEMAS["gradient-flow-v4"])


@pytest.fixture(scope="module")
def grid(trace: Trace) -> str:
    return str(render_explorer(trace))


@pytest.fixture(scope="module")
def data(trace: Trace) -> str:
    return render_explorer_data(trace)


LAB = "labs/gradient-flow.html"


def both(trace: Trace) -> TraceSet:
    """The site's traces (the audit always knows the chapter's), the lab's by default."""
    chapter = load_trace(RECORDS_DIR / "residual-connections-v2.trace",
                         SCHEMAS["residual-connections-v2"])
    return TraceSet({"residual-connections-v2": chapter, "gradient-flow-v4": trace},
                    "gradient-flow-v4")


def lines(fragment: str) -> str:
    return fragment.replace("><", ">\n<") + "\n"


def shown_html(data: str) -> dict[str, dict[str, str]]:
    """The cells and path counts the script shows, from the data script's one statement."""
    name, fragments = read_shown_html_script(data)
    assert name == DATA_NAME
    return fragments


def audited(grid: str, data: str, traces: TraceSet, site: Path) -> list:
    """The audit's findings on a lab page holding ``grid``, with ``data`` published."""
    (site / DATA_FILE).parent.mkdir(parents=True, exist_ok=True)
    (site / DATA_FILE).write_text(data, encoding="utf-8")
    page = f'<article class="md-content__inner md-typeset">{grid}</article>'
    return audit_page(LAB, page, traces, site_dir=site)


def test_a_corner_of_the_grid_matches_its_golden_file(trace: Trace) -> None:
    corner = render_explorer(trace, CORNER_DEPTHS, CORNER_FACTORS)
    data = render_explorer_data(trace, CORNER_DEPTHS, CORNER_FACTORS)
    assert_drawing_matches_golden(lines(str(corner)) + lines(data), CORNER,
                                  "render_explorer and render_explorer_data (corner)")


def test_the_fragment_is_a_pure_function_of_the_trace(trace: Trace, grid: str) -> None:
    assert str(render_explorer(trace)) == grid


def test_every_cell_travels_as_data_and_only_the_chapters_is_in_the_page(
        trace: Trace, grid: str, data: str) -> None:
    factors = trace.resolve("EXPLORER-CONFIG.factors")
    depth = trace.resolve("EXPLORER-CONFIG.max-depth")
    shown = shown_html(data)
    assert list(shown["cells"]) == [f"{f}-{d}" for f in range(len(factors))
                                    for d in range(1, depth + 1)]
    assert len(shown["cells"]) == trace.resolve("EXPLORER-CONFIG.last-cell") + 1
    assert list(shown["counts"]) == [str(d) for d in range(1, depth + 1)]
    chapter = (factors.index(trace.resolve("CHAPTER-PATHS.branch-factor")),
               trace.resolve("CHAPTER-PATHS.layers"))
    assert f'data-shown-html="{DATA_NAME}" data-shown-html-src="{DATA_URL}"' in grid
    assert "<script" not in grid
    assert grid.count("<section") == 1 and " hidden>" not in grid.split("gf-explorer__cells")[1]
    assert shown["cells"][f"{chapter[0]}-{chapter[1]}"] in grid
    assert shown["counts"][str(chapter[1])] in grid
    # Thousands of bars and spans as data, a few hundred elements in the page.
    assert grid.count("<") < 700 < sum(html.count("<") for html in shown["cells"].values())


def test_each_cell_shows_its_own_traced_values(trace: Trace, data: str) -> None:
    sections = [re.fullmatch(r'<section class="gf-cell"[^>]*>(.*?)</section>', html).group(1)
                for html in shown_html(data)["cells"].values()]
    for record, section in zip(trace.explorer, sections, strict=True):
        paths = re.findall(r'data-trace="gradient-flow-v4:([^"]+)"', section)
        cell = f"EXPLORER[{record.cell}]"
        assert paths == [f"{cell}.factor", f"{cell}.depth", f"{cell}.plain", f"{cell}.residual",
                         f"{cell}.contributions", f"{cell}.peak-length"]
        bars = re.findall(r'<li(?: class=n)? style="--w:([0-9.]+)%"></li>', section)
        assert len(bars) == record.depth + 1
        largest = max(abs(c) for c in record.contributions)
        for width, value in zip(bars, record.contributions, strict=True):
            assert float(width) == pytest.approx(100 * abs(value) / largest, abs=0.06)


def curves_of(grid: str) -> list[tuple[int, dict[str, float], bool, str]]:
    """Each factor's drawing: its factor index, the x of every depth, hidden, its body."""
    found = re.findall(r'<svg class="gf-curves" data-factor-index="(\d+)" [^>]*'
                       r"data-x='([^']*)'( hidden)?>(.*?)</svg>", grid)
    return [(int(i), json.loads(xs), bool(hidden), body) for i, xs, hidden, body in found]


def test_every_factor_is_drawn_on_one_log_axis_with_the_chapters_shown(
        trace: Trace, grid: str) -> None:
    factors = trace.resolve("EXPLORER-CONFIG.factors")
    drawings = curves_of(grid)
    assert [index for index, *_ in drawings] == list(range(len(factors)))
    chapter = factors.index(trace.resolve("CHAPTER-PATHS.branch-factor"))
    assert [index for index, _, hidden, _ in drawings if not hidden] == [chapter]
    depth = trace.resolve("CHAPTER-PATHS.layers")
    for index, xs, _, body in drawings:
        assert list(xs) == [str(d) for d in range(1, trace.resolve("EXPLORER-CONFIG.max-depth")
                                                   + 1)]
        mark = re.search(r'class="gf-curves__mark" x1="([0-9.]+)"', body)
        assert mark and float(mark.group(1)) == xs[str(depth)]
        record = trace.resolve(f"EXPLORER-FACTOR[{factors[index]!r}].plain")
        ys = [float(p.split(",")[1]) for line in re.findall(
            r'class="gf-curves__plain" points="([^"]*)"', body) for p in line.split()]
        # One axis for every factor: the higher a magnitude, the higher (smaller y) its point.
        shown = [abs(v) for v in record if v != 0]
        assert len(ys) == len(shown)
        assert all((a > b) == (ya < yb) for (a, ya), (b, yb) in itertools.combinations(
            zip(shown, ys, strict=True), 2) if a != b)
    # A gradient of exactly zero is left out: the plain stack with f = 0 draws no line.
    zero = curves_of(grid)[factors.index(0.0)][3]
    assert "gf-curves__plain" not in zero and "gf-curves__residual" in zero


def test_the_curves_key_names_the_axis_ends_from_the_trace(trace: Trace, grid: str) -> None:
    key = re.search(r'<p class="gf-curves__key">(.*?)</p>', grid)
    assert key
    paths = re.findall(r'data-trace="gradient-flow-v4:([^"]+)"', key.group(1))
    values = [abs(trace.resolve(p)) for p in paths[2:]]
    every = [abs(v) for r in trace.explorer_factor for v in (*r.plain, *r.residual) if v]
    assert values == [min(every), max(every)]


def test_the_sliders_are_labelled_with_their_ends(trace: Trace, grid: str) -> None:
    ends = re.findall(r'<p class="gf-explorer__ends" aria-hidden="true">(.*?)</p>', grid)
    paths = [re.findall(r'data-trace="gradient-flow-v4:([^"]+)"', e) for e in ends]
    factors = trace.resolve("EXPLORER-CONFIG.factors")
    assert paths == [["PATH-COUNT[1].depth", "PATH-COUNT[32].depth"],
                     [f"EXPLORER-FACTOR[{factors[0]!r}].factor",
                      f"EXPLORER-FACTOR[{factors[-1]!r}].factor"]]
    assert grid.count('<output class="gf-explorer__value"') == 2


def test_the_audit_finds_nothing_in_the_whole_grid(trace: Trace, grid: str, data: str,
                                                   tmp_path: Path) -> None:
    assert audited(grid, data, both(trace), tmp_path) == []


def test_the_audit_would_catch_a_typed_value(trace: Trace, grid: str, data: str,
                                            tmp_path: Path) -> None:
    forged = grid.replace("the plain stack passes", "the plain stack (all 32 layers) passes", 1)
    assert any("untagged number '32'" in f.message
               for f in audited(forged, data, both(trace), tmp_path))


@pytest.mark.parametrize(("old", "new", "found"), [
    # a typed number, and a traced value that no longer shows what the trace holds
    ("the plain stack passes", "the plain stack (all 32 layers) passes", "untagged number '32'"),
    ("</span> back to its input", "1</span> back to its input", "the trace gives"),
])
def test_the_audit_reads_every_cell_the_script_would_show(
        trace: Trace, grid: str, data: str, tmp_path: Path, old: str, new: str,
        found: str) -> None:
    shown = shown_html(data)
    last = list(shown["cells"])[-1]  # a cell the page never holds as elements
    shown["cells"][last] = shown["cells"][last].replace(old, new, 1)
    findings = audited(grid, shown_html_script(DATA_NAME, shown), both(trace), tmp_path)
    assert [f.message for f in findings if found in f.message
            and f"(in the HTML a script shows, {DATA_FILE} cells[{last}])" in f.message], findings


@pytest.mark.parametrize(("script", "says"), [
    (None, "no such file in the site"),
    (shown_html_script(DATA_NAME, {"cells": {"0-1": "<p>a</p>"}}).replace('"<p>a</p>"', "[1]"),
     "object of objects of HTML strings"),
    (shown_html_script("charts:other", {}), "files its HTML under 'charts:other', not "
     f"{DATA_NAME!r}"),
])
def test_a_data_script_the_audit_cannot_read_is_a_finding(
        trace: Trace, grid: str, tmp_path: Path, script: str | None, says: str) -> None:
    findings = audited(grid, script or "", both(trace), tmp_path)
    if script is None:
        (tmp_path / DATA_FILE).unlink()
        findings = audit_page(LAB, f'<article class="md-content__inner">{grid}</article>',
                              both(trace), site_dir=tmp_path)
    assert len(findings) == 1 and findings[0].line == 1
    assert findings[0].message.startswith(f"the HTML a script shows ({DATA_URL}) cannot be "
                                          "read: ")
    assert says in findings[0].message


def test_a_grid_without_the_chapters_cell_is_refused(trace: Trace) -> None:
    with pytest.raises(RenderError, match="lacks a cell"):
        render_explorer(trace, (1, 2), (-0.25,))


def test_the_fragment_and_its_data_weigh_what_a_reader_can_carry(grid: str, data: str) -> None:
    # The page carries one cell and the curves; the cells travel in the data script, about
    # a megabyte (a ninth of that gzipped). One traced span per bar instead of one traced
    # vector per cell would add well over another megabyte and a half to it.
    assert len(grid.encode("utf-8")) < 60_000
    assert len(data.encode("utf-8")) < 1_300_000

