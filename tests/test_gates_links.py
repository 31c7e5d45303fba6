"""Tests for the offline link and anchor gate (sitebuild/gates/links.py).

A small synthetic site pins each rule (one deliberately broken reference per case); the slow
tests run the gate over a really built site, untampered and with a broken link, image and
anchor added.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from site_support import published_traces

from sitebuild.gates import run_gates
from sitebuild.gates.links import check_links
from tracefile import Trace
from tracefile.schemas import CHAPTER_TRACE

INDEX = """<!doctype html>
<html><head>
<link rel="stylesheet" href="assets/style.css">
<link rel="canonical" href="https://example.org/residual/">
<link rel="icon" href="assets/icon.png">
<script src="assets/app.js"></script>
<style>.x { background: url("assets/icon.png"); }</style>
</head><body>
<h1 id="top">Residual</h1>
<a href="#top">top</a> <a href="#">nowhere in particular</a>
<a href="trace/">trace</a> <a href="trace/index.html#grammar">grammar</a>
<a href="./trace/?q=1#grammar">query</a> <a href="caf%C3%A9.html#caf%C3%A9">café</a>
<a href="https://arxiv.org/abs/1512.03385">paper</a> <a href="mailto:a@example.org">mail</a>
<img src="img/a.png" alt="a" srcset="img/a.png 1x, img/a.png 2x">
<svg><a xlink:href="#top"><text>up</text></a><use href="#top"/></svg>
<a href="residual.trace" download>trace file</a>
<!--EXTRA-->
</body></html>
"""

TRACE_PAGE = """<!doctype html><html><body>
<h2 id="grammar">Grammar</h2><a name="old-grammar"></a>
<a href="../">home</a> <a href="../index.html#top">top</a> <a href="/trace/#old-grammar">self</a>
</body></html>
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    files = {
        "index.html": INDEX,
        "trace/index.html": TRACE_PAGE,
        "café.html": '<p id="café">é</p>',
        "assets/style.css": "@font-face { src: url(../fonts/a.woff2) format('woff2'); }\n"
        ".i { background: url('icon.png') } .d { background: url(data:image/png;base64,AA==) }",
        "assets/app.js": "",
        "assets/icon.png": "",
        "fonts/a.woff2": "",
        "img/a.png": "",
        "residual.trace": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _add(site: Path, html: str) -> int:
    """Add `html` to the index page; returns its line number."""
    text = (site / "index.html").read_text(encoding="utf-8")
    (site / "index.html").write_text(text.replace("<!--EXTRA-->", html), encoding="utf-8")
    return text.splitlines().index("<!--EXTRA-->") + 1


def test_clean_site_passes(site: Path) -> None:
    assert check_links(site) == []


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<a href="nope/">missing page</a>', "broken link 'nope/': no file nope in the site"),
        ('<img src="img/missing.png" alt="">', "broken link 'img/missing.png'"),
        ('<a href="#nowhere">x</a>', "broken anchor '#nowhere': no id 'nowhere' in index"),
        ('<a href="trace/#nothere">x</a>', "no id 'nothere' in trace/index.html"),
        ('<a href="../../etc/passwd">x</a>', "leaves the site"),
        ('<script src="https://cdn.example.org/katex.js"></script>', "external resource"),
        ('<link rel="stylesheet" href="//fonts.example.org/a.css">', "external resource"),
        ('<iframe src="http://example.org/"></iframe>', "external resource"),
        ('<img srcset="img/a.png 1x, https://example.org/b.png 2x" alt="">', "external resource"),
        ('<style>@import "https://fonts.example.org/x.css";</style>', "external resource"),
        ('<p id="top">again</p>', "duplicate id 'top'"),
        # Inline styles, a refresh and inline module imports are fetched without a click.
        ('<p style="background: url(https://example.org/a.png)">x</p>', "external resource"),
        ("<div style=\"background-image:url('//cdn.example.org/b.png')\"></div>",
         "external resource"),
        ('<p style="background: url(img/missing.png)">x</p>', "broken link 'img/missing.png'"),
        ('<meta http-equiv="refresh" content="0; url=https://example.org/">', "external resource"),
        ("<meta http-equiv=\"Refresh\" content=\"5;URL='https://example.org/x'\">",
         "external resource"),
        ('<meta http-equiv="refresh" content="0; url=gone.html">', "broken link 'gone.html'"),
        ('<script type="module">import "https://cdn.example.org/m.js";</script>',
         "external resource"),
        ('<script type="module">import { a } from "https://esm.example.org/a.js";</script>',
         "external resource"),
        ("<script>const m = await import('https://cdn.example.org/x.js');</script>",
         "external resource"),
        ('<script type="module">export * from "//cdn.example.org/y.js";</script>',
         "external resource"),
        ('<script type="module">import "./assets/missing.js";</script>',
         "broken link './assets/missing.js'"),
    ],
)
def test_each_broken_reference_is_reported(site: Path, html: str, expected: str) -> None:
    line = _add(site, html)
    findings = check_links(site)
    assert len(findings) == 1, findings
    assert expected in findings[0].message
    assert (findings[0].page, findings[0].line, findings[0].gate) == ("index.html", line, "links")


@pytest.mark.parametrize(
    "html",
    [
        '<script type="module">import { x } from "./assets/app.js"; import "katex";</script>',
        '<script type="application/json">{"u": "https://example.org/", "import": "x"}</script>',
        '<meta http-equiv="refresh" content="30">',
        '<meta name="description" content="url=https://example.org/">',
        '<p style="color: red">x</p>',
    ],
)
def test_local_or_inert_references_pass(site: Path, html: str) -> None:
    _add(site, html)
    assert check_links(site) == []


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        ("@font-face { src: url(https://fonts.gstatic.com/a.woff2); }", "external resource"),
        ("a { background: url('missing.png') }", "broken link 'missing.png'"),
    ],
)
def test_stylesheet_urls_are_checked(site: Path, css: str, expected: str) -> None:
    (site / "assets" / "extra.css").write_text("\n" + css, encoding="utf-8")
    findings = check_links(site)
    assert len(findings) == 1, findings
    assert expected in findings[0].message
    assert (findings[0].page, findings[0].line) == ("assets/extra.css", 2)


# --- the real site ---------------------------------------------------------------------


@pytest.mark.slow
def test_real_site_links_pass(built_site: Path) -> None:
    findings = check_links(built_site)
    assert findings == [], "\n".join(map(str, findings))


@pytest.mark.slow
def test_real_site_broken_link_image_and_anchor_fail_the_gates(
    site_copy: Path, trace: Trace
) -> None:
    site = site_copy
    page = site / "trace.html"
    html = page.read_text(encoding="utf-8")
    broken = (
        '<a href="no-such-page.html">a</a>'
        '<img src="assets/images/missing.png" alt="">'
        '<a href="index.html#no-such-anchor">b</a>'
    )
    assert html.count("</article>") == 1
    page.write_text(html.replace("</article>", f"<p>{broken}</p></article>"), encoding="utf-8")
    findings = run_gates(site, published_traces(site, CHAPTER_TRACE))
    messages = [str(f) for f in findings]
    assert len(findings) == 3, messages
    assert all(m.startswith("docs/trace.md") and "[links]" in m
               and "(built into site/trace.html:" in m for m in messages), messages
    assert any("no-such-page" in m for m in messages)
    assert any("missing.png" in m for m in messages)
    assert any("no id 'no-such-anchor' in index.html" in m for m in messages)


@pytest.mark.parametrize(("html", "expected"), [
    # Served under /sub/: a root-relative link must carry the prefix, and then resolves.
    ('<a href="/sub/trace/#old-grammar">in</a>', ""),
    ('<a href="/sub/nope.html">in, missing</a>', "broken link '/sub/nope.html'"),
    ('<a href="/trace/">out</a>', "link '/trace/' leaves the site, which is served under "
                                  "'/sub/'"),
])
def test_a_site_served_under_a_sub_path(site: Path, html: str, expected: str) -> None:
    line = _add(site, f"<p>{html}</p>")
    findings = [f for f in check_links(site, "/sub/") if f.line == line]
    if not expected:
        assert findings == []
    else:
        assert len(findings) == 1 and findings[0].message.startswith(expected), findings


@pytest.mark.parametrize(("html", "expected"), [
    # The host answers the 404 page at any depth: only links from the site's path hold.
    ('<link rel="stylesheet" href="/sub/assets/style.css">', ""),
    ('<a href="#top">top</a>', ""),
    ('<link rel="stylesheet" href="assets/style.css">', "link 'assets/style.css' is relative"),
    ('<a href="index.html">home</a>', "link 'index.html' is relative"),
])
def test_the_404_page_links_only_from_the_sites_path(site: Path, html: str,
                                                     expected: str) -> None:
    (site / "404.html").write_text(f'<html><body><p id="top">{html}</p></body></html>\n',
                                   encoding="utf-8")
    findings = [f for f in check_links(site, "/sub/") if f.page == "404.html"]
    if not expected:
        assert findings == []
    else:
        assert len(findings) == 1 and findings[0].message.startswith(expected), findings
