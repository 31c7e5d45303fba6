"""Tests for sitebuild/hook.py: pages as Jinja templates over the traces.

The hook is the only path from trace to page, so these tests pin what a page may use, that
every failure names the page file and line, and that the hook keeps the site offline and free
of tool version strings.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import Files
from paths import GOLDEN_DIR, GOLDEN_TRACE, ROOT
from site_support import project_copy

from diagrams.charts import values_table
from diagrams.explorer import TRACE as EXPLORER
from diagrams.explorer import render_explorer
from sitebuild import hook as site_hook
from sitebuild.hook import strip_generator
from sitebuild.lockfile import LOCK
from sitebuild.page_render import HookError, PageError, fenced, front_matter_lines, render_page
from sitebuild.paths import CHAPTER_TRACE, SETTINGS_KEY, BuildSettings, trace_url
from sitebuild.site_context import AFTER_SEARCH, BEFORE_SEARCH, Folder, SiteContext, wrappable
from tracefile import SCHEMAS, TraceSet, load_trace, parse_trace
from tracefile.errors import LocatedError


@pytest.fixture
def fixture_trace(tmp_path: Path) -> Path:
    path = tmp_path / "residual-connections-v2.trace"
    path.write_text(GOLDEN_TRACE.read_text())
    return path


@pytest.fixture
def context(tmp_path: Path, fixture_trace: Path) -> SiteContext:
    generated = tmp_path / "generated"
    generated.mkdir()
    (generated / "forward.svg").write_text(
        '<svg class="residual-diagram"><title id="forward-title">Forward &amp; merge</title>\n'
        '\n<g/></svg>\n')
    (generated / "stack.html").write_text('<table class="traced-table"></table>\n')
    traces = TraceSet({CHAPTER_TRACE: load_trace(fixture_trace)}, CHAPTER_TRACE)
    return SiteContext(traces, {CHAPTER_TRACE: fixture_trace}, "report line\n",
                       Folder(generated))


def generated_folder(context: SiteContext) -> Path:
    """The folder a test context's generated files are stored in."""
    assert isinstance(context.files, Folder)
    return context.files.path


def render(context: SiteContext, source: str, offset: int = 0) -> str:
    return render_page(source, "docs/page.md", context.page_globals(CHAPTER_TRACE), offset)


def test_tv_inserts_a_traced_span_with_its_provenance(context: SiteContext) -> None:
    source = 'y = {{ tv("FORWARD.output") }} and {{ tv("STACK[4].residual", "fixed6") }}'
    out = render(context, source)
    assert 'data-trace="residual-connections-v2:FORWARD.output"' in out
    assert 'data-trace="residual-connections-v2:STACK[4].residual"' in out
    assert 'data-format="fixed6"' in out
    assert "[1, \u22123.25]" in out  # display formatting comes from diagrams.format


def test_markdown_attr_lists_survive_and_page_comments_vanish(context: SiteContext) -> None:
    out = render(context, "## Heading {#anchor}\n<#-- a note for authors --#>\ntext\n")
    assert out == "## Heading {#anchor}\n\ntext\n"


def test_trace_is_available_for_conditionals(context: SiteContext) -> None:
    out = render(context, "{% if trace.resolve('REPLAY.bitwise') %}replayed{% endif %}")
    assert out == "replayed"


@pytest.mark.parametrize(
    ("source", "line", "fragment"),
    [
        ("ok\nok\n{{ tv('FORWARD.nope') }}\n", 3, "FORWARD.nope"),
        ("ok\n\n\n{{ undefined_name }}\n", 4, "undefined_name"),
        ("ok\n{{ trace.no_such_record }}\n", 2, "no_such_record"),
        ("ok\n{% if %}\n", 2, ""),
        ("{{ diagram('nowhere') }}", 1, "unknown diagram 'nowhere' (known: forward)"),
        ("\n{{ table('nowhere') }}", 2, "unknown table 'nowhere' (known: stack)"),
        ("{{ tv('FORWARD.output', 'fancy') }}", 1, "fancy"),
    ],
)
def test_every_failure_names_the_page_and_line(
    context: SiteContext, source: str, line: int, fragment: str
) -> None:
    with pytest.raises(PageError) as caught:
        render(context, source)
    err = caught.value
    assert isinstance(err, LocatedError)
    assert (err.path, err.line) == ("docs/page.md", line)
    assert str(err).startswith(f"docs/page.md:{line}: ")
    assert fragment in str(err) and "\n" not in str(err)


def test_line_numbers_count_the_front_matter(context: SiteContext) -> None:
    raw = "---\ntitle: x\n---\n\nbody\n{{ nope }}\n"
    markdown = "body\n{{ nope }}\n"
    offset = front_matter_lines(raw, markdown)
    assert offset == 4
    with pytest.raises(PageError) as caught:
        render(context, markdown, offset)
    assert caught.value.line == 6


def test_diagrams_are_wrapped_for_scrolling_and_labelled(context: SiteContext) -> None:
    out = render(context, "{{ diagram('forward') }}")
    assert out.startswith('<div class="diagram-scroll" tabindex="0" role="region" '
                          'aria-label="Forward &amp; merge">')
    assert "\n\n" not in out  # a blank line would end Markdown's raw HTML block
    table = render(context, "{{ table('stack') }}")
    assert '<table class="traced-table">' in table and "md-typeset__scrollwrap" in table


class _Drawing:
    """A chart being drawn: its SVGs are read only when asked for."""

    def __init__(self, name: str) -> None:
        self.files = [f"{name}.svg", f"{name}-narrow.svg"]
        self.read_files: list[str] = []

    def names(self) -> list[str]:
        return list(self.files)

    def read(self, file_name: str) -> bytes:
        self.read_files.append(file_name)
        return f'<svg><title id="t">Drawn {file_name}</title>\n\n<g/></svg>\n'.encode()


def test_a_chart_is_a_mark_for_markdown_and_drawn_in_after_it(golden_traces: TraceSet) -> None:
    name = "gf-sweep-gradient"
    drawing = _Drawing(name)
    context = SiteContext(golden_traces, {}, None, drawing)
    out = render_page(f'{{{{ chart("{name}", "A caption.") }}}}', "docs/page.md",
                      context.page_globals("gradient-flow-v2"), 0)
    # Markdown never sees a drawing or the values, and a chart still being drawn holds up
    # no page.
    assert drawing.read_files == [] and "<svg" not in out and "<table" not in out
    assert '<figure class="residual-chart" id="gf-sweep-gradient">' in out
    assert "<figcaption>A caption.</figcaption>" in out
    page = context.insert_figures(out, "docs/page.md")
    assert drawing.read_files == drawing.files
    assert page.count('<div class="diagram-scroll" tabindex="0" role="region" '
                      'aria-label="Drawn gf-sweep-gradient') == 2
    assert str(values_table(name, golden_traces)) in page
    assert "figure-slot" not in page and "\n\n" not in page


def test_the_explorer_is_a_mark_for_markdown_and_rendered_in_after_it(
        golden_traces: TraceSet, tmp_path: Path) -> None:
    context = SiteContext(golden_traces, {}, None, Folder(tmp_path / "unused"))
    out = render_page("{{ explorer() }}", "docs/page.md", context.page_globals(EXPLORER), 0)
    assert "data-gf-explorer" not in out and len(out) < 100
    page = context.insert_figures(out, "docs/page.md")
    assert page == str(render_explorer(golden_traces.traces[EXPLORER]))


def test_a_mark_markdown_changed_fails_the_page(golden_traces: TraceSet) -> None:
    context = SiteContext(golden_traces, {}, None, _Drawing("gf-sweep-gradient"))
    with pytest.raises(PageError, match=r"^docs/page\.md: a figure's place was changed"):
        context.insert_figures("<p>&lt;!--figure-slot svg gf-sweep-gradient--&gt;</p>",
                               "docs/page.md")


def test_an_unknown_chart_fails_where_the_page_names_it(golden_traces: TraceSet) -> None:
    context = SiteContext(golden_traces, {}, None, _Drawing("gf-sweep-gradient"))
    with pytest.raises(PageError, match=r"docs/page\.md:2: unknown chart 'gf-no-such' "
                                        r"\(known: .*gf-sweep-gradient"):
        render_page('text\n{{ chart("gf-no-such") }}', "docs/page.md",
                    context.page_globals("gradient-flow-v2"), 0)


def test_raw_trace_and_report_are_code_blocks(context: SiteContext) -> None:
    out = render(context, "{{ raw_trace() }}")
    assert out.startswith("\n```text\nTRACE residual-connections-v2 BEGIN\n")
    assert out.endswith("TRACE residual-connections-v2 END\n```\n")
    assert render(context, "{{ learner_report() }}") == "\n```text\nreport line\n```\n"
    no_report = SiteContext(context.traces, context.trace_paths, None, context.files)
    assert render(no_report, "[{{ learner_report() }}]") == "[]"


def test_a_code_block_cannot_be_closed_from_inside() -> None:
    hostile = "name=```\n````\n<script>alert(1)</script>"
    block = fenced(hostile, "text")
    fence = block.strip().splitlines()[0][: -len("text")]
    assert fence == "`" * 5
    assert block.count(fence) == 2


def test_autoescape_keeps_hostile_values_inert(context: SiteContext) -> None:
    out = render_page("{{ value }}", "docs/page.md", {"value": "<b>&</b>"})
    assert out == "&lt;b&gt;&amp;&lt;/b&gt;"


def test_generator_meta_is_removed() -> None:
    page = ('<head>\n  <meta name="viewport" content="x">\n'
            '  <meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.8.2">\n</head>')
    out = strip_generator(page)
    assert "generator" not in out and "viewport" in out


# ---- the MkDocs events ----


def settings_for(context: SiteContext, **traces: Path) -> BuildSettings:
    return BuildSettings(traces=traces or dict(context.trace_paths), report=None,
                         generated=generated_folder(context))


def fake_config(polyfills: list[str], settings: BuildSettings) -> SimpleNamespace:
    return SimpleNamespace(config_file_path=str(ROOT / "mkdocs.yml"),
                           extra={"polyfills": polyfills, SETTINGS_KEY: settings})


def test_on_config_loads_the_context_and_drops_remote_scripts(context: SiteContext) -> None:
    config = site_hook.on_config(fake_config(["https://unpkg.com/iframe-worker/shim"],
                                             settings_for(context)))
    assert all("://" not in p for p in config.extra["polyfills"])
    loaded = site_hook._state["context"]
    assert loaded.traces.traces[CHAPTER_TRACE] == context.traces.traces[CHAPTER_TRACE]
    assert loaded.report is None


def test_hook_errors_are_site_errors_mkdocs_can_report() -> None:
    from mkdocs.exceptions import PluginError

    err = PageError("docs/index.md", 7, "undefined name")
    assert isinstance(err, LocatedError) and isinstance(err, PluginError)
    assert str(err) == "docs/index.md:7: undefined name"
    assert err.message == "undefined name"  # click's base must not prepend the location
    assert str(HookError.wrap(LocatedError("x.trace", None, "bad"))) == "x.trace: bad"


def test_on_config_reports_a_bad_trace_on_one_line(context: SiteContext,
                                                   tmp_path: Path) -> None:
    bad = tmp_path / "bad.trace"
    bad.write_text("TRACE residual-connections-v2 BEGIN\n")
    with pytest.raises(HookError) as caught:
        site_hook.on_config(fake_config([], settings_for(context, **{CHAPTER_TRACE: bad})))
    assert str(caught.value).startswith(f"{bad}:")
    missing = tmp_path / "missing.trace"
    with pytest.raises(HookError, match="trace not found"):
        site_hook.on_config(fake_config([], settings_for(context, **{CHAPTER_TRACE: missing})))


def test_on_files_vendors_katex_and_publishes_the_trace(context: SiteContext,
                                                        tmp_path: Path) -> None:
    config = load_config(config_file=str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "s"))
    config.extra[SETTINGS_KEY] = settings_for(context)
    # Through MkDocs' plugin collection, as in a build (the hook is loaded from mkdocs.yml).
    config = config.plugins.on_config(config)
    files = config.plugins.on_files(Files([]), config=config)
    uris = {f.src_uri for f in files}
    assert {"assets/vendor/katex/katex.min.js", "assets/vendor/katex/katex.min.css",
            trace_url(CHAPTER_TRACE)} <= uris
    assert any(re.fullmatch(r"assets/vendor/katex/fonts/KaTeX_Main-Regular\.woff2", u)
               for u in uris)
    published = next(f for f in files if f.src_uri == trace_url(CHAPTER_TRACE))
    assert Path(published.abs_src_path) == context.trace_paths[CHAPTER_TRACE]


@pytest.mark.slow
def test_plain_mkdocs_build_regenerates_through_the_cache(tmp_path: Path) -> None:
    # A copy of the project, so the plain build's own build/ folder is not the repository's.
    proj = project_copy(tmp_path)
    (proj / "build" / "trace").mkdir(parents=True)
    for schema in SCHEMAS.values():  # every declared trace, as the engine's last build left it
        shutil.copy(GOLDEN_DIR / schema.file_name, proj / "build" / "trace" / schema.file_name)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "s")],
        cwd=proj, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    index = (tmp_path / "s" / "index.html").read_text()
    assert 'data-trace="residual-connections-v2:FORWARD.output"' in index
    assert 'class="residual-diagram' in index
    assert (proj / "build" / "generated" / "KEY").is_file()


def test_on_config_refuses_a_site_without_the_offline_search_shim(
        context: SiteContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_hook, "SHIM_SRC", "node_modules/no-such-package/shim.js")
    with pytest.raises(HookError, match="iframe-worker shim is not installed"):
        site_hook.on_config(fake_config([], settings_for(context)))


def test_on_config_takes_the_traces_the_build_parsed(context: SiteContext,
                                                      tmp_path: Path) -> None:
    # The build parsed these very files moments before; the hook must not parse them again.
    parsed = context.traces
    settings = BuildSettings(traces={CHAPTER_TRACE: tmp_path / "never-read.trace"},
                             report=None, generated=generated_folder(context), parsed=parsed)
    site_hook.on_config(fake_config([], settings))
    loaded = site_hook._state["context"].traces.traces[CHAPTER_TRACE]
    assert loaded is parsed.traces[CHAPTER_TRACE]


def test_the_page_memo_renders_a_page_again_only_when_an_input_changed(
        context: SiteContext, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = site_hook.render_page
    monkeypatch.setattr(site_hook, "render_page",
                        lambda source, *args: calls.append(source) or real(source, *args))
    memo: dict[str, object] = {}
    page = SimpleNamespace(file=SimpleNamespace(abs_src_path=None, src_uri="page.md"), meta={})

    def build(markdown: str) -> str:
        settings = dataclasses.replace(settings_for(context), page_memo=memo)
        config = site_hook.on_config(fake_config([], settings))
        return site_hook.on_page_markdown(markdown, page=page, config=config, files=None)

    first = build("{{ tv('FORWARD.output') }}")
    assert build("{{ tv('FORWARD.output') }}") == first and len(calls) == 1
    build("Edited: {{ tv('FORWARD.output') }}")
    assert len(calls) == 2
    # A generated file the page may show changed: every page renders again.
    (generated_folder(context) / "stack.html").write_text('<table class="other"></table>\n')
    build("Edited: {{ tv('FORWARD.output') }}")
    assert len(calls) == 3
    # So does a changed trace, even one that gives this page the same text.
    trace_file = context.trace_paths[CHAPTER_TRACE]
    trace_file.write_text(trace_file.read_text().replace("step=1e-06", "step=2e-06"))
    build("Edited: {{ tv('FORWARD.output') }}")
    assert len(calls) == 4


def test_the_page_memo_renders_a_figure_again_only_when_an_input_changed(
        context: SiteContext, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    real = SiteContext._inserted
    monkeypatch.setattr(SiteContext, "_inserted", lambda self, kind, name: calls.append(
        (kind, name)) or real(self, kind, name))
    memo: dict[str, object] = {}

    def build(content: str) -> str:
        settings = dataclasses.replace(settings_for(context), page_memo=memo)
        config = site_hook.on_config(fake_config([], settings))
        page = SimpleNamespace(file=SimpleNamespace(abs_src_path=None, src_uri="page.md"),
                               meta={}, content=content)
        site_hook.on_page_context({}, page=page, config=config, nav=None)
        return page.content

    first = build("<p>A chart:</p>\n<!--figure-slot svg forward-->")
    assert 'aria-label="Forward &amp; merge"' in first and "figure-slot" not in first
    assert build("<p>A chart:</p>\n<!--figure-slot svg forward-->") == first
    assert calls == [("svg", "forward")]
    # The page's own text changed, not the figure's inputs: the figure is not made again.
    edited = build("<p>Edited:</p>\n<!--figure-slot svg forward-->")
    assert edited.removeprefix("<p>Edited:</p>") == first.removeprefix("<p>A chart:</p>")
    assert len(calls) == 1
    # A generated file changed: the figures go in again.
    (generated_folder(context) / "forward.svg").write_text(
        '<svg><title id="t">Redrawn</title></svg>\n')
    assert 'aria-label="Redrawn"' in build("<p>Edited:</p>\n<!--figure-slot svg forward-->")
    assert len(calls) == 2


def test_the_page_memo_key_follows_every_input_a_page_reads(context: SiteContext,
                                                           tmp_path: Path) -> None:
    """Serve re-renders a page, or a figure, only when this digest changes: each thing a
    page's rendering reads besides its own Markdown must change it."""
    root = tmp_path / "project"
    (root / LOCK).parent.mkdir(parents=True)
    (root / LOCK).write_text("mkdocs==1.0\n")
    references: dict[str, object] = {"he2016": "Deep residual learning"}
    base = site_hook.context_digest(root, context, references)
    assert site_hook.context_digest(root, context, dict(references)) == base
    trace_text = context.trace_paths[CHAPTER_TRACE].read_text()
    other_trace = parse_trace(trace_text.replace("step=1e-06", "step=2e-06"), "other.trace")
    changed = {
        "report": dataclasses.replace(context, report="another report\n"),
        "unverified": dataclasses.replace(context, unverified=(CHAPTER_TRACE,)),
        "trace": dataclasses.replace(context, traces=TraceSet(
            {CHAPTER_TRACE: other_trace}, CHAPTER_TRACE)),
    }
    digests = {what: site_hook.context_digest(root, other, references)
               for what, other in changed.items()}
    digests["references"] = site_hook.context_digest(root, context, {**references, "k": "v"})
    (root / LOCK).write_text("mkdocs==2.0\n")
    digests["lock"] = site_hook.context_digest(root, context, references)
    (generated_folder(context) / "stack.html").write_text('<table class="other"></table>\n')
    digests["generated file"] = site_hook.context_digest(root, context, references)
    assert [what for what, digest in digests.items() if digest == base] == []
    assert len(set(digests.values())) == len(digests)


def test_the_explorer_goes_in_after_the_search_plugin_has_read_the_page(
        tmp_path: Path) -> None:
    """The hook's two events, as MkDocs calls them with the search plugin (priority 0)
    reading the page between them: the chart goes in before, the explorer after."""
    name = "gf-sweep-gradient"
    generated = tmp_path / "generated"
    generated.mkdir()
    for file in _Drawing(name).files:
        (generated / file).write_bytes(_Drawing(name).read(file))
    settings = BuildSettings(
        traces={trace_id: GOLDEN_DIR / SCHEMAS[trace_id].file_name
                for trace_id in (CHAPTER_TRACE, EXPLORER)}, report=None, generated=generated)
    config = site_hook.on_config(fake_config([], settings))
    context: SiteContext = site_hook._state["context"]
    page = SimpleNamespace(file=SimpleNamespace(abs_src_path=None, src_uri="page.md"),
                           meta={}, content="\n".join(
                               str(mark) for mark in (context.chart(name), context.explorer())))
    site_hook.on_page_context({}, page=page, config=config, nav=None)
    assert "<svg" in page.content and "data-gf-explorer" not in page.content
    assert "figure-slot explorer" in page.content
    out = site_hook.on_post_page(f"<html>{page.content}</html>", page=page, config=config)
    assert "data-gf-explorer" in out and "figure-slot" not in out
    assert out == f"<html>{context.insert_figures(page.content, 'docs/page.md')}</html>"
    assert getattr(site_hook.on_page_context, "mkdocs_priority", 0) > 0
    assert getattr(site_hook.on_post_page, "mkdocs_priority", 0) > 0


@pytest.mark.parametrize(("html", "kinds", "later"), [
    # Markdown escaped the explorer's mark: found before the search plugin reads the page.
    ("<p>&lt;!--figure-slot explorer gradient-flow-v2--&gt;</p>", BEFORE_SEARCH, AFTER_SEARCH),
    # A chart's mark that nothing put in: the last pass finds it.
    ("<!--figure-slot svg gf-sweep-gradient-->", AFTER_SEARCH, ()),
])
def test_a_mark_left_where_no_later_pass_takes_it_fails_the_page(
        golden_traces: TraceSet, html: str, kinds: tuple[str, ...],
        later: tuple[str, ...]) -> None:
    context = SiteContext(golden_traces, {}, None, _Drawing("gf-sweep-gradient"))
    with pytest.raises(PageError, match=r"^docs/page\.md: a figure's place was changed"):
        context.insert_figures(html, "docs/page.md", kinds, later)


def test_wrappable_code_breaks_only_after_equals_signs_and_dots() -> None:
    assert str(wrappable("STACK-CONFIG.layers")) == (
        "<code>STACK-CONFIG.<wbr>layers</code>")
    assert str(wrappable("name=<b>&")) == "<code>name=<wbr>&lt;b&gt;&amp;</code>"
    assert str(wrappable("once")) == "<code>once</code>"
