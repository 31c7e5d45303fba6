"""Tests of diagrams.tables: every number in a cell is a traced span, tables are accessible and
escape hostile names, templates never compute, and errors are RenderErrors."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from jinja2.exceptions import UndefinedError
from paths import DOCS

from diagrams.errors import RenderError
from diagrams.format import format_value, number_tokens
from diagrams.tables import TABLES, TEMPLATES, environment, render_table
from tracefile import Trace, parse_trace
from tracefile.errors import TracePathError


def local(path: str) -> str:
    """A provenance path without its trace id, which every table must write."""
    prefix = "residual-connections-v2:"
    assert path.startswith(prefix), f"{path!r} does not name its trace"
    return path[len(prefix):]

class Cells(HTMLParser):
    """Collects, per <td>/<th>, its text and the data-trace paths inside it; plus captions."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict] = []
        self.captions: list[str] = []
        self.scopes: list[str | None] = []
        self.stack: list[str] = []
        self.outside_spans: list[str] = []
        self.in_span = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("td", "th"):
            self.cells.append({"tag": tag, "text": "", "paths": []})
            if tag == "th":
                self.scopes.append(found.get("scope"))
        if tag == "span" and found.get("class") == "tv":
            self.in_span += 1
            if "td" in self.stack or "th" in self.stack:
                self.cells[-1]["paths"].append((local(found["data-trace"]), found["data-format"]))
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        self.stack.pop()
        if tag == "span":
            self.in_span -= 1

    def handle_data(self, data: str) -> None:
        if "caption" in self.stack:
            self.captions.append(data)
        elif self.stack and self.stack[-1] in ("td", "th", "span"):
            self.cells[-1]["text"] += data
        if not self.in_span:
            self.outside_spans.append(data)


def parse(markup: str) -> Cells:
    cells = Cells()
    cells.feed(str(markup))
    cells.close()
    return cells


@pytest.mark.parametrize("name", list(TABLES))
def test_every_number_is_a_traced_span(trace: Trace, name: str) -> None:
    cells = parse(render_table(name, trace))
    for cell in cells.cells:
        if cell["tag"] == "td":
            assert len(cell["paths"]) == 1, cell
            path, fmt = cell["paths"][0]
            assert cell["text"] == format_value(trace.resolve(path), fmt)
    assert not any(number_tokens(text) for text in cells.outside_spans)


@pytest.mark.parametrize("name", list(TABLES))
def test_accessible_structure(trace: Trace, name: str) -> None:
    markup = str(render_table(name, trace))
    cells = parse(markup)
    assert markup.startswith("<table") and markup.count("<caption>") == 1
    assert cells.scopes and set(cells.scopes) <= {"col", "row", "rowgroup"}
    assert "\n\n" not in markup and not re.search(r"^\s", markup, re.MULTILINE)


def test_stack_table(trace: Trace) -> None:
    cells = parse(render_table("stack", trace))
    rows = [c for c in cells.cells if c["tag"] == "th"][3:]
    assert [r["text"] for r in rows] == ["0", "1", "2", "3", "4", "Input gradient"]
    paths = [p for c in cells.cells for p in c["paths"]]
    assert ("STACK[4].depth", "exact") in paths
    assert ("STACK[4].plain", "exact") in paths
    assert ("STACK-GRADIENT.residual", "exact") in paths
    texts = [c["text"] for c in cells.cells]
    assert "[0.0078125, −0.00390625]" in texts and "[0.31640625, 0.31640625]" in texts


def test_stack_depths_come_from_the_trace(trace_text: str) -> None:
    # The retention record names the depth too (an invariant ties it to the layer count).
    text = trace_text.replace("layers=4", "layers=3").replace("RETENTION depth=4",
                                                              "RETENTION depth=3")
    text = "\n".join(line for line in text.split("\n") if not line.startswith("STACK depth=4"))
    cells = parse(render_table("stack", parse_trace(text)))
    assert [c["text"] for c in cells.cells if c["tag"] == "th"][3:] == [
        "0", "1", "2", "3", "Input gradient"]


def test_the_popover_has_the_stored_value(trace: Trace) -> None:
    markup = str(render_table("stack", trace))
    assert ('data-trace="residual-connections-v2:STACK[4].plain" data-what="The plain '
            'stack&#39;s activation. The activations after each layer, plain and residual '
            '(depth 4)." data-format="exact" data-list data-exact="[0.0078125,-0.00390625]">'
            '[0.0078125, −0.00390625]<') in markup


def test_gradient_split_adds_up_per_coordinate(trace: Trace) -> None:
    cells = parse(render_table("gradient-split", trace))
    body = [c for c in cells.cells if c["paths"]]
    assert [p for c in body for p, _ in c["paths"]] == [
        "BACKWARD.identity[0]", "BACKWARD.branch[0]", "BACKWARD.input[0]",
        "BACKWARD.identity[1]", "BACKWARD.branch[1]", "BACKWARD.input[1]",
    ]
    assert [c["text"] for c in body] == [
        "1", "−0.5", "0.5", "1", "2.25", "3.25"]


def test_zero_branch_table(trace: Trace) -> None:
    cells = parse(render_table("zero-branch", trace))
    assert "residual.zero.weight" in "".join(cells.captions)
    texts = [c["text"] for c in cells.cells if c["tag"] == "td"]
    assert texts == ["[2, −1]", "[1, 1]", "[2, 2, −1, −1]", "true"]


def test_hostile_names_are_escaped(hostile_trace: Trace, hostile_name: str) -> None:
    markup = str(render_table("zero-branch", hostile_trace))
    assert "<script" not in markup and "{{" not in markup
    caption = "".join(parse(markup).captions)
    assert caption.endswith(hostile_name)
    assert html.unescape(markup).count(hostile_name) == 1  # shown as stored: no data-exact


def test_templates_never_compute() -> None:
    for template in TEMPLATES.glob("*.html.j2"):
        for expression in re.findall(r"{{(.*?)}}", template.read_text(encoding="utf-8")):
            assert not re.search(r"[|+*/%~]|\s-\s|\[", expression), (template.name, expression)
            assert re.fullmatch(r'\s*(tv\([\w.]+(, ("\w+"|[\w.]+))?\)|[\w.]+)\s*', expression)


def test_strict_undefined_and_autoescape() -> None:
    env = environment()
    with pytest.raises(UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_unknown_table_and_path_and_template(trace: Trace, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    with pytest.raises(RenderError, match="known: stack, gradient-split"):
        render_table("nope", trace)
    monkeypatch.setitem(TABLES, "broken", ("missing.html.j2", lambda t: {}))
    with pytest.raises(RenderError, match=r"missing\.html\.j2"):
        render_table("broken", trace)
    monkeypatch.setitem(TABLES, "misspelt", ("stack.html.j2", lambda t: {
        "rows": [{"depth": "STACK[9].depth", "plain": "x", "residual": "x"}], "gradient": {}}))
    with pytest.raises(TracePathError):
        render_table("misspelt", trace)


def test_predictions_table_answers_each_prediction_from_the_trace(trace: Trace) -> None:
    from diagrams.tables import PREDICTIONS

    html_text = str(render_table("predictions", trace))
    rows = re.findall(r'<tr><th scope="row"><a href="#([a-z-]+)">([^<]+)</a></th>'
                      r'<td>(<span class="tv" data-trace="([^"]+)"[^>]*>[^<]*</span>)</td></tr>',
                      html_text)
    assert len(rows) == len(PREDICTIONS) > 0
    for (anchor, _label, span, path), expected in zip(rows, PREDICTIONS, strict=True):
        assert (local(path), anchor) == (expected[1], expected[2])
        shown = re.sub(r"<[^>]+>", "", span)
        assert shown == format_value(trace.resolve(path))


def test_predictions_table_links_to_sections_of_the_chapter() -> None:
    from diagrams.tables import PREDICTIONS

    page = (DOCS / "index.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r"\{#([a-z-]+)\}", page))
    missing = sorted({anchor for _label, _path, anchor in PREDICTIONS} - anchors)
    assert missing == [], f"predictions table links to sections the chapter lacks: {missing}"
