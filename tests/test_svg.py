"""Tests of diagrams.svg: inline SVG that is accessible, theme-neutral, deterministic, with ids
unique across a page, and RenderError when Graphviz is missing or fails."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from diagrams.errors import RenderError
from diagrams.format import format_value, number_tokens
from diagrams.svg import DIAGRAM_TRACE, DIAGRAMS, diagram_trace, render_diagram, render_svg
from tracefile import Trace, TraceSet

NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def traces(golden_traces: TraceSet) -> dict[str, Trace]:
    """The trace each diagram draws: the chapter's golden trace, or the one it names."""
    return {name: diagram_trace(name, golden_traces) for name in DIAGRAMS}


def test_each_diagram_draws_its_own_trace(golden_traces: TraceSet, trace: Trace) -> None:
    assert diagram_trace("forward", golden_traces).trace_id == trace.trace_id
    for name, trace_id in DIAGRAM_TRACE.items():
        assert diagram_trace(name, golden_traces).trace_id == trace_id
        assert diagram_trace(name, trace) is None  # a lone chapter trace does not hold it
    assert diagram_trace("forward", trace) is trace


@pytest.fixture(scope="module")
def svgs(traces: dict[str, Trace]) -> dict[str, str]:
    return {name: render_diagram(name, traces[name]) for name in DIAGRAMS}


def test_registry_names() -> None:
    assert list(DIAGRAMS) == ["forward", "backward", "checks", "stack", "decoder-block",
                              "forward-narrow", "backward-narrow", "stack-narrow"]
    for dot_fn, title, desc in DIAGRAMS.values():
        assert callable(dot_fn) and title and desc
        assert not number_tokens(title) and not number_tokens(desc)


@pytest.mark.parametrize("name", list(DIAGRAMS))
def test_root_is_accessible_and_scalable(svgs: dict[str, str], name: str) -> None:
    svg = svgs[name]
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    assert root.get("role") == "img"
    assert root.get("class") == "residual-diagram"
    assert root.get("aria-labelledby") == f"{name}-title {name}-desc"
    assert root.get("width") is None and root.get("height") is None
    assert re.fullmatch(r"[0-9. ]+", root.get("viewBox", ""))
    assert "max-width:100%" in root.get("style", "")
    title, desc = list(root)[:2]
    assert title.tag == f"{NS}title" and title.get("id") == f"{name}-title"
    assert desc.tag == f"{NS}desc" and desc.get("id") == f"{name}-desc"
    assert title.text == DIAGRAMS[name][1] and desc.text == DIAGRAMS[name][2]
    assert len(root.findall(f".//{NS}title")) == 1  # graphviz's node tooltips are gone


@pytest.mark.parametrize("name", list(DIAGRAMS))
def test_no_prolog_doctype_comments_or_fixed_colours(svgs: dict[str, str], name: str) -> None:
    svg = svgs[name]
    assert svg.startswith("<svg ")
    for banned in ("<?xml", "<!DOCTYPE", "<!--", "graphviz", '"black"', '"white"', "&#45;"):
        assert banned not in svg
    assert 'stroke="currentColor"' in svg
    assert all('fill="' in text for text in re.findall(r"<text [^>]*>", svg))
    assert "\n\n" not in svg and not re.search(r"^\s", svg, re.MULTILINE)


def test_ids_are_prefixed_and_unique_across_a_page(svgs: dict[str, str]) -> None:
    seen: list[str] = []
    for name, svg in svgs.items():
        ids = re.findall(r'\bid="([^"]*)"', svg)
        assert ids and all(i.startswith(f"{name}-") for i in ids)
        seen += ids
        for ref in re.findall(r'(?:url\(#|href="#)([^)"]*)', svg):
            assert ref.startswith(f"{name}-")
    assert len(seen) == len(set(seen))
    assert "forward-add" in seen and "stack-residual_4" in seen


def test_classes_survive_for_css(svgs: dict[str, str]) -> None:
    assert 'class="edge identity"' in svgs["forward"]
    assert 'class="edge learned"' in svgs["forward"]
    assert 'class="node merge"' in svgs["forward"]
    assert 'stroke-dasharray' in svgs["forward"]  # the dashed learned path


@pytest.mark.parametrize("name", list(DIAGRAMS))
def test_deterministic(traces: dict[str, Trace], svgs: dict[str, str], name: str) -> None:
    assert render_diagram(name, traces[name]) == svgs[name]


@pytest.mark.parametrize("name", list(DIAGRAMS))
def test_every_number_in_svg_text_is_traced(traces: dict[str, Trace], svgs: dict[str, str],
                                            name: str) -> None:
    trace = traces[name]
    allowed = {
        token
        for path in trace.all_paths()
        for fmt in ("exact", "fixed6")
        for token in number_tokens(format_value(trace.resolve(path), fmt))
    }
    root = ET.fromstring(svgs[name])
    texts = [t.text or "" for t in root.iter(f"{NS}text")]
    assert any(number_tokens(t) for t in texts)
    for text in texts:
        assert set(number_tokens(text)) <= allowed, text


def test_forward_shows_traced_values(svgs: dict[str, str]) -> None:
    texts = [t.text for t in ET.fromstring(svgs["forward"]).iter(f"{NS}text")]
    assert "x = [2, −1]" in texts
    assert "y = [1, −3.25]" in texts


def test_hostile_names_stay_text(hostile_trace: Trace, hostile_name: str) -> None:
    svg = render_diagram("checks", hostile_trace)
    root = ET.fromstring(svg)  # still well-formed XML
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "<script" not in svg
    assert any(t and "alert(1)" in t for t in texts)
    assert not root.findall(f".//{NS}script")


def test_missing_dot_is_a_render_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       trace: Trace) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RenderError, match="install graphviz") as err:
        render_diagram("forward", trace)
    assert err.value.path == "<diagram forward>"


def test_failing_dot_reports_its_stderr() -> None:
    with pytest.raises(RenderError, match=r"dot -Tsvg failed .*syntax error") as err:
        render_svg("digraph { a -> ", "broken", "Broken", "A broken graph")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("bad", ["", "1x", "a b", 'a"b', "a<b"])
def test_diagram_id_is_validated(bad: str) -> None:
    with pytest.raises(RenderError, match="diagram id"):
        render_svg("digraph { a }", bad, "t", "d")


def test_title_and_desc_are_escaped() -> None:
    svg = render_svg("digraph { a }", "demo", "<b>&", 'x "y"')
    root = ET.fromstring(svg)
    assert root.find(f"{NS}title").text == "<b>&"
    assert root.find(f"{NS}desc").text == 'x "y"'


def test_unknown_diagram(trace: Trace) -> None:
    with pytest.raises(RenderError, match="known: forward, backward, checks, stack"):
        render_diagram("sideways", trace)
