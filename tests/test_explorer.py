"""diagrams/explorer.py: the gradients lab's explorer, rendered from the trace.

A small corner of the grid is held against a golden file (tests/golden/explorer-corner.html,
one tag per line so a change is a readable diff); the whole grid is checked for structure
and passed through the provenance audit, which must find nothing.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest
from golden_support import assert_drawing_matches_golden
from paths import GOLDEN_DIR

from diagrams.errors import RenderError
from diagrams.explorer import render_explorer
from sitebuild.gates.audit import audit_page
from tracefile import SCHEMAS, Trace, TraceSet, load_trace

GOLDEN_TRACE = GOLDEN_DIR / "gradient-flow-v3.trace"
CORNER = GOLDEN_DIR / "explorer-corner.html"
#: The corner: the chapter's stack (its factor and depth) and its neighbours.
CORNER_FACTORS = (-1.0, -0.25)
CORNER_DEPTHS = (3, 4)


@pytest.fixture(scope="module")
def trace() -> Trace:
    return load_trace(GOLDEN_TRACE, SCHEMAS["gradient-flow-v3"])


@pytest.fixture(scope="module")
def grid(trace: Trace) -> str:
    return str(render_explorer(trace))


def both(trace: Trace) -> TraceSet:
    """The site's traces (the audit always knows the chapter's), the lab's by default."""
    chapter = load_trace(GOLDEN_DIR / "residual-connections-v2.trace",
                         SCHEMAS["residual-connections-v2"])
    return TraceSet({"residual-connections-v2": chapter, "gradient-flow-v3": trace},
                    "gradient-flow-v3")


def lines(fragment: str) -> str:
    return fragment.replace("><", ">\n<") + "\n"


def shown_html(grid: str) -> dict[str, dict[str, str]]:
    """The cells and path counts the script shows, from the fragment's one JSON element."""
    found = re.findall(r'<script type="application/json" class="gf-explorer__data" '
                       r"data-shown-html>(.*?)</script>", grid, re.S)
    assert len(found) == 1
    return json.loads(found[0])


def in_the_page(grid: str) -> str:
    """The fragment without its JSON element: what the page holds as elements."""
    return re.sub(r"<script [^>]*data-shown-html>.*?</script>", "", grid, flags=re.S)


def test_a_corner_of_the_grid_matches_its_golden_file(trace: Trace) -> None:
    corner = render_explorer(trace, CORNER_DEPTHS, CORNER_FACTORS)
    assert_drawing_matches_golden(lines(str(corner)), CORNER, "render_explorer (corner)")


def test_the_fragment_is_a_pure_function_of_the_trace(trace: Trace, grid: str) -> None:
    assert str(render_explorer(trace)) == grid


def test_every_cell_travels_as_data_and_only_the_chapters_is_in_the_page(
        trace: Trace, grid: str) -> None:
    factors = trace.resolve("EXPLORER-CONFIG.factors")
    depth = trace.resolve("EXPLORER-CONFIG.max-depth")
    data = shown_html(grid)
    assert list(data["cells"]) == [f"{f}-{d}" for f in range(len(factors))
                                   for d in range(1, depth + 1)]
    assert len(data["cells"]) == trace.resolve("EXPLORER-CONFIG.last-cell") + 1
    assert list(data["counts"]) == [str(d) for d in range(1, depth + 1)]
    chapter = (factors.index(trace.resolve("CHAPTER-PATHS.branch-factor")),
               trace.resolve("CHAPTER-PATHS.layers"))
    page = in_the_page(grid)
    assert page.count("<section") == 1 and " hidden>" not in page.split("gf-explorer__cells")[1]
    assert data["cells"][f"{chapter[0]}-{chapter[1]}"] in page
    assert data["counts"][str(chapter[1])] in page
    # Thousands of bars and spans as data, a few hundred elements in the page.
    assert page.count("<") < 700 < sum(html.count("<") for html in data["cells"].values())


def test_each_cell_shows_its_own_traced_values(trace: Trace, grid: str) -> None:
    sections = [re.fullmatch(r'<section class="gf-cell"[^>]*>(.*?)</section>', html).group(1)
                for html in shown_html(grid)["cells"].values()]
    for record, section in zip(trace.explorer, sections, strict=True):
        paths = re.findall(r'data-trace="gradient-flow-v3:([^"]+)"', section)
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
    paths = re.findall(r'data-trace="gradient-flow-v3:([^"]+)"', key.group(1))
    values = [abs(trace.resolve(p)) for p in paths[2:]]
    every = [abs(v) for r in trace.explorer_factor for v in (*r.plain, *r.residual) if v]
    assert values == [min(every), max(every)]


def test_the_sliders_are_labelled_with_their_ends(trace: Trace, grid: str) -> None:
    ends = re.findall(r'<p class="gf-explorer__ends" aria-hidden="true">(.*?)</p>', grid)
    paths = [re.findall(r'data-trace="gradient-flow-v3:([^"]+)"', e) for e in ends]
    factors = trace.resolve("EXPLORER-CONFIG.factors")
    assert paths == [["PATH-COUNT[1].depth", "PATH-COUNT[32].depth"],
                     [f"EXPLORER-FACTOR[{factors[0]!r}].factor",
                      f"EXPLORER-FACTOR[{factors[-1]!r}].factor"]]
    assert grid.count('<output class="gf-explorer__value"') == 2


def test_the_audit_finds_nothing_in_the_whole_grid(trace: Trace, grid: str) -> None:
    traces = both(trace)
    page = f'<article class="md-content__inner md-typeset">{grid}</article>'
    assert audit_page("labs/gradient-flow.html", page, traces) == []


def test_the_audit_would_catch_a_typed_value(trace: Trace, grid: str) -> None:
    traces = both(trace)
    forged = grid.replace("the plain stack passes", "the plain stack (all 32 layers) passes", 1)
    page = f'<article class="md-content__inner md-typeset">{forged}</article>'
    assert any("untagged number '32'" in f.message
               for f in audit_page("labs/gradient-flow.html", page, traces))


@pytest.mark.parametrize(("old", "new", "found"), [
    # a typed number, and a traced value that no longer shows what the trace holds
    ("the plain stack passes", "the plain stack (all 32 layers) passes", "untagged number '32'"),
    ("</span> back to its input", "1</span> back to its input", "the trace gives"),
])
def test_the_audit_reads_every_cell_the_script_would_show(trace: Trace, grid: str, old: str,
                                                          new: str, found: str) -> None:
    data = shown_html(grid)
    last = list(data["cells"])[-1]  # a cell the page never holds as elements
    data["cells"][last] = data["cells"][last].replace(old, new, 1)
    forged = re.sub(r"(data-shown-html>).*?(</script>)",
                    lambda m: m.group(1) + json.dumps(data).replace("</", "<\\/") + m.group(2),
                    grid, flags=re.S)
    page = f'<article class="md-content__inner md-typeset">{forged}</article>'
    findings = audit_page("labs/gradient-flow.html", page, both(trace))
    assert [f.message for f in findings if found in f.message
            and f"(in the HTML a script shows, cells[{last}])" in f.message], findings
    broken = forged.replace('data-shown-html>{"cells"', 'data-shown-html>{"cells" oops', 1)
    assert any("is not an object of objects of HTML strings" in f.message for f in audit_page(
        "labs/gradient-flow.html", f'<article class="md-content__inner">{broken}</article>',
        both(trace)))


def test_a_grid_without_the_chapters_cell_is_refused(trace: Trace) -> None:
    with pytest.raises(RenderError, match="lacks a cell"):
        render_explorer(trace, (1, 2), (-0.25,))


def test_the_fragment_weighs_what_the_page_can_carry(grid: str) -> None:
    # Measured when the explorer was written: about a megabyte (a ninth of that gzipped).
    # One traced span per bar instead of one traced vector per cell would add well over
    # another megabyte and a half; this bound keeps that from creeping back in.
    assert len(grid.encode("utf-8")) < 1_300_000

