"""Tests for sitebuild/gates/islands.py: replaying a figure is reading it.

A parser fed a page through ``feed_page`` with a memo, the first time (recording) and again
(replaying), must see exactly the handler calls and positions of a parser fed the page
whole; an island that is not one balanced figure, or that the tokenizer reaches inside a
script, an attribute or a comment, is read as it stands. On the built site, the audit and the
links gate find the same things with and without replaying, broken pages included.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from sitebuild.gates import audit, links
from sitebuild.gates.figures import ExpectedDiagrams
from sitebuild.gates.islands import feed_page, figure_spans, record
from tracefile import TraceSet


class Seen(HTMLParser):
    """Every handler call with the position the parser reports for it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.calls: list[tuple[Any, ...]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.calls.append(("start", tag, list(attrs), self.getpos()))

    def handle_endtag(self, tag: str) -> None:
        self.calls.append(("end", tag, self.getpos()))

    def handle_data(self, data: str) -> None:
        self.calls.append(("data", data, self.getpos()))

    def handle_comment(self, data: str) -> None:
        self.calls.append(("comment", data, self.getpos()))

    def handle_decl(self, decl: str) -> None:
        self.calls.append(("decl", decl, self.getpos()))


def seen(html: str, memo: dict[Any, Any] | None) -> list[tuple[Any, ...]]:
    parser = Seen()
    feed_page(parser, html, "page.html", memo)
    parser.close()
    return [*parser.calls, ("end of page", parser.getpos())]


PAGES = {
    "two islands": ('<!doctype html>\n<p>One &amp; two</p>\n<figure class="chart">\n'
                    '<svg viewBox="0 0 1 1"><title>A</title></svg>\n<figcaption>The '
                    'first</figcaption></figure>  <p>Then <figure id="x"><p>in\nline'
                    '</p><figure><img src="a.png"/></figure></figure>AT&T</p>'),
    "an island first and last": '<figure><p>only</p></figure>',
    "a figure in a script": ('<script>document.write("<figure>x</figure>");</script>\n'
                             '<p>x</p>\n<figure>y</figure>'),
    "a figure in an attribute": '<p title="a <figure>b</figure> c">t</p><figure>z</figure>\n',
    "a figure in a comment": ('<!-- <figure>v</figure> --><p>c</p><figure>\nw\n</figure>'
                              '<p>d</p>'),
    "an unclosed figure": '<p>a</p><figure><p>b</p>',
    "a stray end tag": '<figure><p>a</p></div></figure><p>b</p>',
    "text held back": '<p>x &amp<figure>&amp;</figure></p>',
    "a script in an island": '<figure><script>a = "</figure>";</script></figure><p>e</p>',
}


@pytest.mark.parametrize("html", PAGES.values(), ids=PAGES.keys())
def test_replaying_calls_every_handler_as_reading_does(html: str) -> None:
    memo: dict[Any, Any] = {}
    assert seen(html, memo) == seen(html, None)  # recording
    assert seen(html, memo) == seen(html, None)  # replaying


def test_a_recorded_figure_is_replayed_not_read_again() -> None:
    html = PAGES["two islands"]
    memo: dict[Any, Any] = {}
    seen(html, memo)
    slot = ("island", "page.html", 0)
    inputs, events = memo[slot]
    changed = [(name, ("replayed",) if name == "handle_data" else args, line, column)
               for name, args, line, column in events]
    memo[slot] = (inputs, changed)
    replayed = [call for call in seen(html, memo) if call[:2] == ("data", "replayed")]
    assert len(replayed) == sum(name == "handle_data" for name, *_ in events) > 0
    edited = html.replace("The first", "The second")  # another island: read, recorded anew
    assert seen(edited, memo) == seen(edited, None)
    assert memo[slot][1] != changed


def test_an_island_must_be_one_balanced_figure() -> None:
    assert record("<figure><p>a</p></figure>") is not None
    assert record("<figure>a</figure><figure>b</figure>") is None
    assert record("<figure><figure>a</figure>") is None
    assert record("<p>a</p>") is None
    assert record('<figure><script>a = "</figure>') is None  # still inside the script
    assert list(figure_spans("<figure>a</figure><figure>b</figure>")) == [(0, 18), (18, 36)]
    assert list(figure_spans("</figure><figure>a</FIGURE >")) == [(9, 28)]


@pytest.mark.slow
def test_the_gates_find_the_same_with_replayed_figures(site_copy: Path,
                                                      golden_traces: TraceSet) -> None:
    page = site_copy / "labs" / "gradient-flow.html"
    html = page.read_text(encoding="utf-8")
    assert len(list(figure_spans(html))) > 1
    shown = 'data-format="exact" title="gradient-flow-v2:EXPLORER[15].depth = 16">16<'
    assert shown in html
    broken = (html.replace(shown, shown.replace(">16<", ">17<"), 1)  # in the explorer
              .replace('id="gf-explorer-depth"', 'id="gf-explorer-factor"', 1)
              .replace("</article>", "<p>A typed 0.5.</p></article>", 1))
    traces = audit.with_published(site_copy, golden_traces)
    diagrams = ExpectedDiagrams(traces)
    for text in (html, broken):
        memo: dict[Any, Any] = {}
        plain = (audit.audit_page(page.name, text, traces, diagrams),
                 links._page_links(page.name, text, None))
        for _ in range(2):  # recording, then replaying
            assert (audit.audit_page(page.name, text, traces, diagrams, memo=memo),
                    links._page_links(page.name, text, memo)) == plain
            for slot in [slot for slot in memo if slot[0] != "island"]:
                del memo[slot]  # the page's own findings: only the figures are remembered
        assert all(events is not None for slot, (_, events) in memo.items())
    found = audit.audit_page(page.name, broken, traces, diagrams)
    assert any("EXPLORER[15].depth" in f.message and "'17'" in f.message for f in found)
    assert any("0.5" in f.message for f in found)
    assert any("duplicate id" in f.message for f in links._page_links(page.name, broken,
                                                                       None)[2])
