"""sitebuild/render.py and sitebuild/page_context.py: the pages rendered before the generator.

Render first: every page of ``docs/`` becomes plain Markdown in the pages folder, with its
figures in place whole as blocks of HTML, next to every other file of ``docs/``, the vendored
KaTeX and search shim and the published traces. These tests pin what a page may use, that a
failure names the page file and line, that the folder holds exactly what the site needs and is
written only where something changed, and that Markdown passes the figures through untouched.
"""

from __future__ import annotations

import dataclasses
import html
import re
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import markdown
import pytest
from paths import RECORDS_DIR, ROOT

from diagrams.charts import chart_title, chart_trace, render_chart, values_table
from diagrams.explorer import DATA_FILE as EXPLORER_DATA
from diagrams.explorer import TRACE as EXPLORER
from diagrams.explorer import render_explorer, render_explorer_data
from diagrams.format import traced, wrappable
from diagrams.shown_html import read_shown_html_script
from diagrams.svg import NARROW
from diagrams.words import number_words, trace_rules
from sitebuild.citations import load_references, render_reference
from sitebuild.errors import BuildError
from sitebuild.generator import read_settings
from sitebuild.numbering import Numbering
from sitebuild.page_context import PROSE_FORMAT, PageContext
from sitebuild.paths import CHAPTER_TRACE, trace_url
from sitebuild.publish import PUBLISHED_FILES
from sitebuild.render import (
    KATEX_DIST,
    SHIM_SRC,
    SHIM_URL,
    PageError,
    render_one,
    render_page,
    render_pages,
)
from tracefile import SCHEMAS, Trace, TraceSet, load_trace
from tracefile.rules import LIMITS

CHART = "gf-sweep-gradient"
TRACE_PATHS = {trace_id: RECORDS_DIR / schema.file_name for trace_id, schema in SCHEMAS.items()}
FAKE_FILES = {
    "forward.svg": b'<svg class="residual-diagram"><title id="forward-title">Forward &amp; '
                   b"merge</title>\n\n<g/></svg>\n",
    "stack.html": b'<table class="traced-table"><caption>Stacks</caption></table>\n',
}
REFERENCES = load_references({"references": {"he2016": {
    "authors": "Kaiming He et al.", "title": "Deep Residual Learning", "venue": "CVPR",
    "year": "2016", "arxiv": "1512.03385"}}})
#: The small project the render tests fill a pages folder from.
PAGES = {
    "index.md": "# Chapter\n\ny = {{ tv('FORWARD.output') }}\n",
    "labs/gradient-flow.md": "---\ntrace: gradient-flow-v4\n---\n# Lab\n\n"
                             "Depth {{ tv('EXPLORER-CONFIG.max-depth') }}.\n",
}
ASSET = "assets/css/extra.css"
ASSET_BYTES = b"body { color: red; }\r\n/* \xff not text */\n"
VENDORED = {
    f"{KATEX_DIST}/katex.min.css": b".katex{}\n",
    f"{KATEX_DIST}/fonts/x.woff2": b"wOF2\x00\x01",
    SHIM_SRC: b"shim();\n",
}
PUBLISHED_VENDOR = {
    "assets/vendor/katex/katex.min.css": f"{KATEX_DIST}/katex.min.css",
    "assets/vendor/katex/fonts/x.woff2": f"{KATEX_DIST}/fonts/x.woff2",
    SHIM_URL: SHIM_SRC,
}
#: The explorer's cells, the wide drawing and values of the one chart the context holds, and
#: every trace's raw listing.
SCRIPT_DATA = [EXPLORER_DATA, "assets/charts/gradient-flow-v4.js",
               "assets/charts/gradient-flow-v4-values.js",
               *(f"assets/traces/{trace_id}.js" for trace_id in SCHEMAS)]
EVERY_FILE = sorted([*PAGES, ASSET, *PUBLISHED_VENDOR, *SCRIPT_DATA,
                     *(trace_url(trace_id) for trace_id in SCHEMAS)])


@pytest.fixture(scope="module")
def chart_files(golden_traces: TraceSet) -> dict[str, bytes]:
    """One real chart, drawn from the golden traces (wide and phone-width)."""
    return {f"{name}.svg": render_chart(name, golden_traces).encode("utf-8")
            for name in (CHART, f"{CHART}{NARROW}")}


@pytest.fixture
def context(golden_traces: TraceSet, chart_files: dict[str, bytes]) -> PageContext:
    return PageContext(golden_traces, "report line\n",
                       {**FAKE_FILES, **chart_files}, REFERENCES, ROOT)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    files = {**{f"docs/{name}": text.encode() for name, text in PAGES.items()},
             f"docs/{ASSET}": ASSET_BYTES, **VENDORED}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def render(context: PageContext, source: str, trace_id: str = CHAPTER_TRACE) -> str:
    return render_page(source, "docs/page.md", context.page_globals(trace_id))


def listing(folder: Path) -> list[str]:
    """The files of ``folder``, but the list of them the render keeps there."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.name != PUBLISHED_FILES)


# ---- what a page may use ----


def test_tv_inserts_a_traced_span_with_its_provenance(context: PageContext) -> None:
    out = render(context, 'y = {{ tv("FORWARD.output") }} and {{ tv("STACK[4].residual", '
                          '"fixed6") }}')
    assert 'data-trace="residual-connections-v2:FORWARD.output"' in out
    assert 'data-trace="residual-connections-v2:STACK[4].residual"' in out
    assert 'data-format="fixed6"' in out
    assert "[1, \u22123.25]" in out  # display formatting comes from diagrams.format


def test_a_page_naming_a_trace_reads_its_paths_from_that_trace(context: PageContext) -> None:
    out = render(context, "{{ tv('EXPLORER-CONFIG.max-depth') }} "
                          "{{ tv('residual-connections-v2:FORWARD.output') }}", EXPLORER)
    assert 'data-trace="gradient-flow-v4:EXPLORER-CONFIG.max-depth"' in out and ">32<" in out
    assert 'data-trace="residual-connections-v2:FORWARD.output"' in out


def test_a_spread_shows_its_range_only_where_it_spans_something(context: PageContext) -> None:
    # median (low–high), each traced; "1 (1–1.000)" is one number, shown once
    spans = render(context, '{{ spread("BEST[plain-default-2]") }}', EXPLORER)
    assert spans.count('class="tv"') == 3 and ") (<" not in spans and "–" in spans
    alike = render(context, '{{ spread("BEST[plain-scaled-32]") }}', EXPLORER)
    assert alike.count('class="tv"') == 1 and alike.endswith(">1</span>")
    shares = render(context, '{{ spread("ARM[plain-default-2-lr0.01]", "percent", '
                             '("median", "low", "high")) }}', EXPLORER)
    assert re.search(r">\d+(\.\d+)?%<", shares)


def test_trace_is_available_for_conditionals(context: PageContext) -> None:
    source = "{% if trace.resolve('REPLAY.bitwise') %}replayed{% endif %}"
    assert render(context, source) == "replayed"


def test_traces_lists_every_trace_with_its_published_address(context: PageContext) -> None:
    out = render(context, "{% for t, url in traces %}{{ t.trace_id }}={{ url }};{% endfor %}")
    assert out == "".join(f"{trace_id}={trace_url(trace_id)};" for trace_id in SCHEMAS)


@pytest.mark.parametrize(
    ("source", "line", "fragment"),
    [
        ("ok\nok\n{{ tv('FORWARD.nope') }}\n", 3, "FORWARD.nope"),
        ("ok\n\n\n{{ undefined_name }}\n", 4, "undefined_name"),
        ("ok\n{{ trace.no_such_record }}\n", 2, "no_such_record"),
        ("{{ diagram('nowhere') }}", 1, "unknown diagram 'nowhere' (known: forward, "),
        ("\n{{ table('nowhere') }}", 2, "unknown table 'nowhere' (known: stack)"),
        ("{{ tv('FORWARD.output', 'fancy') }}", 1, "fancy"),
        ("text\n{{ chart('gf-no-such') }}", 2, "unknown chart 'gf-no-such' (known: "
                                               "forward, gf-sweep-gradient"),
        ("\n\n{{ cite('nobody1999') }}", 3, "unknown citation 'nobody1999' (known: he2016)"),
    ],
)
def test_every_failure_names_the_page_and_line(context: PageContext, source: str, line: int,
                                               fragment: str) -> None:
    with pytest.raises(PageError) as caught:
        render(context, source)
    assert (caught.value.path, caught.value.line) == ("docs/page.md", line)
    assert str(caught.value).startswith(f"docs/page.md:{line}: ")
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_diagrams_and_tables_are_numbered_wrapped_and_labelled(context: PageContext) -> None:
    out = render(context, "{{ diagram('forward') }}")
    assert out == ('<figure class="diagram-figure" id="figure-forward">\n'
                   '<div class="diagram-scroll" tabindex="0" role="region" '
                   'aria-label="Forward &amp; merge">\n<svg class="residual-diagram">'
                   '<title id="forward-title">Forward &amp; merge</title>\n<g/></svg>\n</div>\n'
                   '<figcaption><span class="element-number" data-for="figure-forward">Figure 1'
                   '</span>. Forward &amp; merge</figcaption>\n</figure>')
    table = render(context, "{{ table('stack') }}")
    assert table == ('<div class="md-typeset__scrollwrap" id="table-stack">'
                     '<div class="md-typeset__table">\n<table class="traced-table"><caption>'
                     '<span class="element-number" data-for="table-stack">Table 1</span>. '
                     'Stacks</caption></table>\n</div></div>')


def test_a_diagram_with_a_phone_width_variant_shows_both(context: PageContext) -> None:
    narrow = b'<svg class="residual-diagram"><title>Forward, narrow</title></svg>\n'
    both = dataclasses.replace(context, files={**context.files, "forward-narrow.svg": narrow})
    out = render(both, "{{ diagram('forward') }}")
    assert out.startswith('<figure class="diagram-figure" id="figure-forward">\n'
                          '<div class="figure-wide">\n<div class="diagram-scroll"')
    assert '<div class="figure-narrow">\n<div class="diagram-scroll" tabindex="0" ' \
           'role="region" aria-label="Forward, narrow">' in out


def test_a_chart_is_one_figure_holding_its_drawings_and_values_whole(
        context: PageContext, golden_traces: TraceSet, chart_files: dict[str, bytes]) -> None:
    out = render(context, f'{{{{ chart("{CHART}", "A caption & more.") }}}}', EXPLORER)
    data = f"assets/charts/{chart_trace(CHART)}.js"
    assert out.startswith(f'<figure class="residual-chart" id="{CHART}" data-shown-html='
                          f'"charts:{chart_trace(CHART)}" data-shown-html-src="{data}">\n')
    assert out.endswith("</figure>") and out.count("<figure") == 1
    assert (f'<figcaption id="{CHART}-caption"><span class="element-number" '
            f'data-for="{CHART}">Figure 1</span>. A caption &amp; more.</figcaption>') in out
    # Its values scroll in a region the keyboard reaches, named by the figure.
    assert (f'role="region" tabindex="0" aria-labelledby="{CHART}-values {CHART}-caption"'
            in out)
    # The page holds the phone-width drawing; the wide one is in the charts' data script.
    wide, narrow = ("\n".join(line for line in chart_files[name].decode().splitlines()
                              if line.strip()) for name in (f"{CHART}.svg", f"{CHART}{NARROW}.svg"))
    assert narrow in out and wide not in out
    assert out.count(f'role="region" aria-label="{chart_title(CHART)}') == 1
    name, fragments = read_shown_html_script(context.data_files()[data].decode())
    assert name == f"charts:{chart_trace(CHART)}" and list(fragments["wide"]) == [CHART]
    assert wide in fragments["wide"][CHART]
    assert f'role="region" aria-label="{chart_title(CHART)}' in fragments["wide"][CHART]
    # The fold of plotted values names their data script and links to the raw trace.
    values = f"assets/charts/{chart_trace(CHART)}-values.js"
    assert (f'<details class="chart-values" data-shown-html="values:{chart_trace(CHART)}" '
            f'data-shown-html-src="{values}" data-shown-html-fragment="values/{CHART}">') in out
    assert f'<a href="trace.html#{chart_trace(CHART)}">raw trace</a>' in out
    assert "<table" not in out
    name, fragments = read_shown_html_script(context.data_files()[values].decode())
    assert fragments == {"values": {CHART: str(values_table(CHART, golden_traces))}}
    # Whole: no placeholder left for a later pass, no blank line to end Markdown's HTML block.
    assert "<!--" not in out and "figure-slot" not in out and "\n\n" not in out


def test_a_chart_on_a_page_in_a_folder_names_its_data_from_there(context: PageContext) -> None:
    out = str(context.page_globals(EXPLORER, page="labs/lab.md")["chart"](CHART))
    assert f'data-shown-html-src="../assets/charts/{chart_trace(CHART)}.js"' in out
    assert f'data-shown-html-src="../assets/charts/{chart_trace(CHART)}-values.js"' in out
    assert f'href="../trace.html#{chart_trace(CHART)}"' in out


def test_a_chart_without_a_caption_is_captioned_with_its_title(context: PageContext) -> None:
    out = render(context, f"{{{{ chart('{CHART}') }}}}", EXPLORER)
    assert f"</span>. {chart_title(CHART)}</figcaption>" in out


def test_a_chart_caption_says_which_lines_are_drawn_on_top_of_each_other(
        context: PageContext, golden_traces: TraceSet) -> None:
    # rs-projection draws two shortcuts' gradients within a line's width of each other; the
    # sentence follows the page's caption, whose traced value stays a traced value.
    name, stream = "rs-projection", "residual-stream-v4"
    files = {f"{n}.svg": render_chart(n, golden_traces).encode("utf-8")
             for n in (name, f"{name}{NARROW}")}
    together = dataclasses.replace(context, files={**context.files, **files})
    out = render(together, f'{{{{ chart("{name}", "Ratio " ~ tv("SHORTCUT[identity].ratio") '
                           '~ ".") }}', stream)
    caption = re.search(r"<figcaption[^>]*>(.*)</figcaption>", out)
    assert caption and caption.group(1).startswith('<span class="element-number"')
    assert str(traced(golden_traces.traces[stream], "SHORTCUT[identity].ratio",
                      PROSE_FORMAT)) in caption.group(1)
    assert caption.group(1).endswith(
        ". The lines ‘orthogonal’ and ‘random, well scaled’ lie within a line&#39;s width of "
        "each other at every point, so they are drawn on top of each other.")
    assert "drawn on top" not in render(context, f"{{{{ chart('{CHART}') }}}}", EXPLORER)


def test_explorer_returns_the_explorers_html(context: PageContext,
                                             golden_traces: TraceSet) -> None:
    out = render(context, "{{ explorer() }}", EXPLORER)
    assert out == str(render_explorer(golden_traces.traces[EXPLORER]))
    assert out.startswith('<figure class="gf-explorer" data-gf-explorer')


def test_the_explorer_without_its_trace_fails_at_the_line(context: PageContext,
                                                          golden_traces: TraceSet) -> None:
    chapter_only = TraceSet({CHAPTER_TRACE: golden_traces.traces[CHAPTER_TRACE]}, CHAPTER_TRACE)
    without = dataclasses.replace(context, traces=chapter_only)
    with pytest.raises(PageError, match=r"^docs/page\.md:2: the explorer needs trace "
                                        r"gradient-flow-v4$"):
        render(without, "\n{{ explorer() }}")


def test_the_raw_trace_is_a_fold_its_script_fills_and_the_report_a_code_block(
        context: PageContext) -> None:
    out = render(context, "{{ raw_trace_fold() }}")
    assert out.startswith(
        f'<details class="example" data-shown-html="trace:{CHAPTER_TRACE}" data-shown-html-src='
        f'"assets/traces/{CHAPTER_TRACE}.js" data-shown-html-fragment="listing/{CHAPTER_TRACE}">')
    assert f'<a href="trace/{CHAPTER_TRACE}.trace">open the trace file</a>' in out
    for trace in context.traces:
        name, fragments = read_shown_html_script(
            context.data_files()[f"assets/traces/{trace.trace_id}.js"].decode())
        listing = fragments["listing"][trace.trace_id]
        assert name == f"trace:{trace.trace_id}" and list(fragments) == ["listing"]
        assert listing.startswith('<div class="language-text highlight"><pre><span></span>'
                                  f'<code tabindex="0">TRACE {trace.trace_id} BEGIN\n')
        assert html.unescape(listing.split(">", 5)[5].split("</code>")[0]) == trace.text
    assert render(context, "{{ learner_report() }}") == "\n```text\nreport line\n```\n"
    no_report = dataclasses.replace(context, report=None)
    assert render(no_report, "[{{ learner_report() }}]") == "[]"


def test_autoescape_keeps_hostile_trace_names_inert(context: PageContext,
                                                     hostile_trace: Trace,
                                                     hostile_name: str) -> None:
    traces = TraceSet({CHAPTER_TRACE: hostile_trace}, CHAPTER_TRACE)
    hostile = dataclasses.replace(context, traces=traces)
    out = render(hostile, "{{ tv('PARAMETER.name') }}")
    assert "<script>" not in out and "{{x}}" not in out and "&lt;script&gt;" in out
    data = hostile.data_files()[f"assets/traces/{CHAPTER_TRACE}.js"].decode()
    listing = read_shown_html_script(data)[1]["listing"][CHAPTER_TRACE]
    assert "<script>" not in listing and hostile_name in html.unescape(listing)


def test_wrappable_code_breaks_only_after_equals_signs_and_dots() -> None:
    assert str(wrappable("STACK-CONFIG.layers")) == "<code>STACK-CONFIG.<wbr>layers</code>"
    assert str(wrappable("name=<b>&")) == "<code>name=<wbr>&lt;b&gt;&amp;</code>"
    assert str(wrappable("once")) == "<code>once</code>"


def test_the_trace_rules_spell_their_limits_in_words() -> None:
    rules = trace_rules()
    assert rules and not any(name in rule for rule in rules for name in LIMITS)
    text = " ".join(rules)
    assert all(number_words(value) in text for value in LIMITS.values())


def test_number_words_cite_and_pinned_are_page_globals(context: PageContext) -> None:
    out = render(context, "{{ number_words(12) }}|{{ cite('he2016') }}|{{ pinned('mkdocs') }}")
    words, citation, pin = out.split("|")
    assert words == "twelve"
    assert citation.startswith('<cite class="citation"><a class="citation-ref" '
                               'href="#ref-he2016" data-preview="Kaiming He et al. (2016). Deep')
    assert citation.endswith('">(He et al. 2016)</a></cite>')
    assert pin == f'<code class="pinned" data-lock="mkdocs">{metadata.version("mkdocs")}</code>'


def test_a_page_that_cites_ends_with_its_references(project: Path,
                                                  context: PageContext) -> None:
    page = project / "docs" / "cites.md"
    page.write_text("# Cites\n\nAs {{ cite('he2016') }} and again {{ cite('he2016') }}.\n")
    rendered = render_one(project, page, context)
    body, _, section = rendered.partition("\n\n## References\n\n")
    assert body.count('href="#ref-he2016"') == 2
    assert section == (f'<ul class="references">\n<li id="ref-he2016">'
                       f'{render_reference(REFERENCES, "he2016")}</li>\n</ul>\n')
    page.write_text("# Cites nothing\n")
    assert "References" not in render_one(project, page, context)


def test_a_reference_before_its_figure_is_numbered_and_a_missing_one_fails_at_its_line(
        project: Path, context: PageContext) -> None:
    page = project / "docs" / "refs.md"
    page.write_text("# Refs\n\nSee {{ ref('table-stack') }}.\n\n{{ table('stack') }}\n")
    rendered = render_one(project, page, context)
    assert 'See <a class="element-ref" href="#table-stack">Table 1</a>.' in rendered
    page.write_text("# Refs\n\n{{ table('stack') }}\n\nSee {{ ref('figure-nowhere') }}.\n")
    with pytest.raises(PageError, match=r"^docs/refs\.md:5: ref\('figure-nowhere'\): no "
                                        r"figure, table or equation of the page has that label "
                                        r"\(it has: table-stack\)$"):
        render_one(project, page, context)


def test_a_markdown_tables_caption_is_numbered_with_the_generated_tables(
        context: PageContext) -> None:
    out = render(context, "{{ table('stack') }}\n{{ table_caption('kept', 'Kept <rows>') }}\n"
                          "See {{ ref('table-kept') }}.")
    assert ('<p class="table-caption" id="table-kept"><span class="element-number" '
            'data-for="table-kept">Table 2</span>. Kept &lt;rows&gt;</p>') in out
    assert 'See <a class="element-ref" href="#table-kept">Table 2</a>.' in out
    with pytest.raises(PageError, match="'table-stack' is shown twice on the page"):
        render(context, "{{ table('stack') }}\n{{ table_caption('stack', 'Again') }}")


def test_an_equation_is_display_math_with_its_number(context: PageContext) -> None:
    out = render(context, '{% call equation("merge") %}\ny = x + F(x) & z < 1\n{% endcall %}')
    assert out == ('<div class="numbered-equation" id="equation-merge">\n'
                   '<div class="arithmatex">\\[y = x + F(x) &amp; z &lt; 1\\]</div>\n'
                   '<span class="element-number" data-for="equation-merge">(1)</span>\n</div>')


def test_rerun_names_the_command_for_the_pages_experiments(context: PageContext) -> None:
    out = render(context, '{{ rerun("ten-layers", "sweep") }}', EXPLORER)
    assert out == f'<code class="rerun">./dev run {EXPLORER} ten-layers sweep</code>'
    with pytest.raises(PageError, match=r"^docs/page\.md:2: rerun: trace gradient-flow-v4 has no "
                                        r"experiment 'ten-layer' \(it has: numerics, ten-layers"):
        render(context, '\n{{ rerun("ten-layer") }}', EXPLORER)


def test_notebook_links_a_labs_notebook_from_the_page(context: PageContext) -> None:
    link = context.page_globals(EXPLORER, page="labs/gradient-flow.md")["notebook"]
    assert link("gradient-flow") == ('<a class="notebook-link" href="../notebooks/'
                                     'gradient-flow.ipynb" download>gradient-flow.ipynb</a>')
    with pytest.raises(PageError, match=r"^docs/page\.md:2: notebook: notebooks/ has no "
                                        r"'gradient'\.py \(it has: gradient-flow, residual"):
        render(context, '\n{{ notebook("gradient") }}', EXPLORER)


# ---- the pages folder ----


def test_each_page_is_rendered_and_every_other_file_copied(project: Path,
                                                           context: PageContext,
                                                           golden_traces: TraceSet) -> None:
    pages = project.parent / "pages"
    assert render_pages(project, context, pages) == EVERY_FILE
    assert listing(pages) == EVERY_FILE
    assert (pages / PUBLISHED_FILES).read_text().splitlines() == EVERY_FILE
    forward = traced(golden_traces, "FORWARD.output", PROSE_FORMAT)  # tv's default format
    assert (pages / "index.md").read_text() == f"# Chapter\n\ny = {forward}\n"
    lab = TraceSet(golden_traces.traces, EXPLORER)
    depth = traced(lab, "EXPLORER-CONFIG.max-depth", PROSE_FORMAT)
    # The front matter stays, for the generator.
    assert (pages / "labs/gradient-flow.md").read_text() == (
        f"---\ntrace: {EXPLORER}\n---\n# Lab\n\nDepth {depth}.\n")
    assert (pages / ASSET).read_bytes() == ASSET_BYTES
    assert (pages / EXPLORER_DATA).read_text() == render_explorer_data(
        golden_traces.traces[EXPLORER])


def test_katex_and_the_search_shim_are_vendored(project: Path, context: PageContext) -> None:
    pages = project.parent / "pages"
    render_pages(project, context, pages)
    for published, source in PUBLISHED_VENDOR.items():
        assert (pages / published).read_bytes() == VENDORED[source], published


def test_each_trace_is_published_with_its_exact_bytes(project: Path,
                                                      context: PageContext) -> None:
    pages = project.parent / "pages"
    render_pages(project, context, pages)
    for trace_id, path in TRACE_PATHS.items():
        assert trace_url(trace_id) == f"trace/{path.name}"
        assert (pages / trace_url(trace_id)).read_bytes() == path.read_bytes()


def test_a_trace_file_changed_after_parsing_is_not_published(
        project: Path, golden_traces: TraceSet, tmp_path: Path) -> None:
    # The published copy is the parsed trace's bytes: an edit to the file (a tampered
    # build/trace/ under serve) after the traces were read never reaches the site.
    copies = tmp_path / "traces"
    copies.mkdir()
    parsed = {}
    for trace_id, path in TRACE_PATHS.items():
        shutil.copy(path, copies / path.name)
        parsed[trace_id] = load_trace(copies / path.name, SCHEMAS[trace_id])
        (copies / path.name).write_text("TAMPERED\n")
    context = PageContext(TraceSet(parsed, CHAPTER_TRACE), None, FAKE_FILES, REFERENCES, ROOT)
    render_pages(project, context, tmp_path / "pages")
    for trace_id, path in TRACE_PATHS.items():
        assert (tmp_path / "pages" / trace_url(trace_id)).read_bytes() == path.read_bytes()


def test_a_symbolic_link_in_docs_is_refused(project: Path, context: PageContext,
                                            tmp_path: Path) -> None:
    secret = tmp_path / "private.txt"
    secret.write_text("SECRET")
    (project / "docs" / "notes.txt").symlink_to(secret)
    with pytest.raises(BuildError, match=r"docs/notes\.txt: is a symbolic link \(to "):
        render_pages(project, context, tmp_path / "pages")
    assert not (tmp_path / "pages" / "notes.txt").exists()


def test_a_second_render_writes_nothing(project: Path, context: PageContext) -> None:
    pages = project.parent / "pages"
    render_pages(project, context, pages)
    before = {name: (pages / name).stat().st_mtime_ns for name in EVERY_FILE}
    assert render_pages(project, context, pages) == []
    assert {name: (pages / name).stat().st_mtime_ns for name in EVERY_FILE} == before


def test_only_renders_just_the_pages_named(project: Path, context: PageContext) -> None:
    pages = project.parent / "pages"
    render_pages(project, context, pages)
    lab_before = (pages / "labs/gradient-flow.md").read_text()
    (project / "docs/index.md").write_text("# Edited\n")
    (project / "docs/labs/gradient-flow.md").write_text("# Also edited\n")
    assert render_pages(project, context, pages, only={"docs/index.md"}) == ["index.md"]
    assert (pages / "index.md").read_text() == "# Edited\n"
    assert (pages / "labs/gradient-flow.md").read_text() == lab_before
    assert render_pages(project, context, pages) == ["labs/gradient-flow.md"]


def test_a_file_removed_from_docs_disappears_from_the_pages_folder(
        project: Path, context: PageContext) -> None:
    pages = project.parent / "pages"
    render_pages(project, context, pages)
    (project / "docs" / ASSET).unlink()
    (project / "docs/labs/gradient-flow.md").unlink()
    assert render_pages(project, context, pages) == []
    assert listing(pages) == [name for name in EVERY_FILE
                              if name not in (ASSET, "labs/gradient-flow.md")]


def test_a_file_of_the_users_among_the_pages_stops_the_render_and_stays(
        project: Path, context: PageContext) -> None:
    pages = project.parent / "pages"
    render_pages(project, context, pages)
    (pages / "draft.md").write_text("mine")
    (project / "docs/labs/gradient-flow.md").unlink()  # would be deleted by a render
    with pytest.raises(BuildError, match=r"pages/draft\.md: is not a file the build made"):
        render_pages(project, context, pages)
    assert (pages / "draft.md").read_text() == "mine"
    assert (pages / "labs/gradient-flow.md").is_file()  # nothing written or deleted


@pytest.mark.parametrize(("missing", "what"), [
    (f"{KATEX_DIST}/katex.min.css", "KaTeX is not installed"),
    (SHIM_SRC, "iframe-worker shim is not installed"),
])
def test_missing_katex_or_shim_fails_naming_dev_setup(project: Path, context: PageContext,
                                                      missing: str, what: str) -> None:
    (project / missing).unlink()
    with pytest.raises(BuildError) as caught:
        render_pages(project, context, project.parent / "pages")
    assert caught.value.path == (KATEX_DIST if missing.startswith(KATEX_DIST) else SHIM_SRC)
    assert what in caught.value.message and "`./dev setup`" in caught.value.message
    assert not (project.parent / "pages").exists()  # refused before anything was written


def test_a_page_that_is_not_utf8_fails_naming_the_page(project: Path,
                                                       context: PageContext) -> None:
    (project / "docs/bad.md").write_bytes(b"# Title\n\xff\xfe\n")
    with pytest.raises(PageError) as caught:
        render_pages(project, context, project.parent / "pages")
    assert str(caught.value) == "docs/bad.md:2: not UTF-8 text (invalid start byte at byte 8)"


def test_front_matter_naming_an_unknown_trace_fails_at_the_trace_line(
        project: Path, context: PageContext) -> None:
    page = project / "docs/labs/gradient-flow.md"
    page.write_text("---\ntitle: Lab\ntrace: no-such-trace\n---\n# Lab\n")
    with pytest.raises(PageError) as caught:
        render_one(project, page, context)
    assert (caught.value.path, caught.value.line) == ("docs/labs/gradient-flow.md", 3)
    assert "front matter names trace 'no-such-trace'; the site has " \
           "residual-connections-v2, gradient-flow-v4" in caught.value.message


@pytest.mark.parametrize("front", ["trace: [a, b]", '"trace" : 7'])
def test_front_matter_naming_no_trace_fails_at_the_trace_line(
        project: Path, context: PageContext, front: str) -> None:
    page = project / "docs/labs/gradient-flow.md"
    page.write_text(f"---\ntitle: Lab\n{front}\n---\n# Lab\n")
    with pytest.raises(PageError) as caught:
        render_one(project, page, context)
    assert (caught.value.path, caught.value.line) == ("docs/labs/gradient-flow.md", 3)
    assert "front matter's trace must be a trace's name" in caught.value.message


def test_a_failure_below_front_matter_is_located_in_the_page_file(project: Path,
                                                                   context: PageContext) -> None:
    (project / "docs/labs/gradient-flow.md").write_text(
        "---\ntrace: gradient-flow-v4\n---\n# Lab\n\n{{ tv('FORWARD.output') }}\n")
    with pytest.raises(PageError) as caught:
        render_pages(project, context, project.parent / "pages")
    assert (caught.value.path, caught.value.line) == ("docs/labs/gradient-flow.md", 6)
    assert "FORWARD" in caught.value.message  # the lab's trace has no such record


def test_the_unverified_banner_opens_every_page(project: Path, context: PageContext) -> None:
    unverified = dataclasses.replace(context, unverified=(CHAPTER_TRACE, EXPLORER))
    pages = project.parent / "pages"
    render_pages(project, unverified, pages)
    for name in PAGES:
        text = (pages / name).read_text().removeprefix(f"---\ntrace: {EXPLORER}\n---\n")
        assert text.startswith('!!! danger "Unverified trace"\n    This site was built from '
                               "trace files that differ from a fresh run of the engine "
                               "(`residual-connections-v2`, `gradient-flow-v4`)."), name
        assert text.removeprefix(unverified.banner()).startswith("# "), name
    assert (pages / ASSET).read_bytes() == ASSET_BYTES
    assert not render_one(project, project / "docs/index.md", context).startswith("!!!")


# ---- what the render-first design relies on ----


def markdown_extensions() -> tuple[list[str], dict[str, dict[str, Any]]]:
    """mkdocs.yml's Markdown extensions and their settings (snippets left out: it reads
    listings from the project, which these pages do not use)."""
    settings = read_settings(ROOT)
    names, configs = [], {}
    for entry in settings["markdown_extensions"]:
        name, config = next(iter(entry.items())) if isinstance(entry, dict) else (entry, None)
        if name != "pymdownx.snippets":
            names.append(name)
            if config:
                configs[name] = config
    return names, configs


def test_markdown_passes_a_chart_and_the_explorer_through_unchanged(
        project: Path, context: PageContext) -> None:
    page = project / "docs/labs/gradient-flow.md"
    page.write_text("---\ntrace: gradient-flow-v4\n---\n# Lab\n\nDepth "
                    "{{ tv('EXPLORER-CONFIG.max-depth') }}, as *plotted*:\n\n"
                    f"{{{{ chart('{CHART}', 'The gradient.') }}}}\n\nTry it:\n\n"
                    "{{ explorer() }}\n\nThe end.\n")
    rendered = render_one(project, page, context)
    names, configs = markdown_extensions()
    html = markdown.markdown(rendered, extensions=names, extension_configs=configs)
    chart = str(context.chart(CHART, "The gradient.", Numbering(), "labs/gradient-flow.md"))
    explorer = str(context.explorer())
    assert chart in html and explorer in html
    spans = re.findall(r'<span class="tv"[^>]*>[^<]*</span>', rendered)
    assert len(spans) > 50 and all(span in html for span in spans)
    svgs = re.findall(r"<svg\b[^>]*>", rendered)
    factors = context.traces.traces["gradient-flow-v4"].resolve("EXPLORER-CONFIG.factors")
    assert len(svgs) == 1 + len(factors)  # the chart's phone-width drawing; the explorer's curves
    assert all(svg in html for svg in svgs)
    assert "<p>Try it:</p>" in html and "<em>plotted</em>" in html  # still Markdown around
