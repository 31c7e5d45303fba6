"""Tests for sitebuild/warm.py: serve's per-page memos change nothing but time.

A warm rebuild must write the very bytes a cold build writes, after any edit; a memo entry
must be dropped when anything it was made from changes (the page, a snippet's source file, the
page it links into); a render that warned must warn again; MkDocs' own methods come back after
every build, failed or not. The gates' memo must find on a reused page what it found before.
"""

from __future__ import annotations

import dataclasses
import inspect
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from paths import ROOT
from site_support import BuiltSite, project_copy, tree_digest

from sitebuild.errors import BuildError
from sitebuild.gates import audit, links
from sitebuild.mkdocs_run import mkdocs_build
from sitebuild.paths import CHAPTER_TRACE, REPORT_NAME, BuildSettings
from sitebuild.warm import Warm
from tracefile import SCHEMAS, LocatedError, Trace, TraceSet

CONFIG = """\
site_name: Tiny
docs_dir: docs
strict: true
use_directory_urls: false
theme:
  name: material
plugins:
  - search
nav:
  - One: one.md
  - Two: two.md
markdown_extensions:
  - toc:
      permalink: true
  - pymdownx.superfences
  - pymdownx.snippets:
      base_path: ["."]
      check_paths: true
validation:
  links:
    not_found: warn
    anchors: warn
"""
ONE = "# One\n\nSee [the second part](two.md#second-part).\n\n--8<-- \"src/listing.py\"\n"
TWO = ("# Two\n\n## Second part\n\nWords.\n\n"
       '<figure class="chart"><p>A figure the search reads.</p></figure>\n')


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A two-page Material site whose first page links to an anchor of the second and
    includes a snippet from outside docs/."""
    root = tmp_path / "tiny"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    (root / "docs" / "one.md").write_text(ONE, encoding="utf-8")
    (root / "docs" / "two.md").write_text(TWO, encoding="utf-8")
    (root / "src" / "listing.py").write_text("LISTED = 'first'\n", encoding="utf-8")
    return root


def build(root: Path, out: Path, warm: Warm | None) -> dict[str, str]:
    shutil.rmtree(out, ignore_errors=True)
    settings = BuildSettings(traces={}, report=None, generated=root / "generated")
    mkdocs_build(root, out, settings, None, warm)
    return tree_digest(out)


def test_a_warm_rebuild_writes_what_a_cold_build_writes(tiny: Path, tmp_path: Path) -> None:
    warm = Warm()
    build(tiny, tmp_path / "first", warm)
    assert (warm.hits, warm.misses) == (0, 2)
    (tiny / "docs" / "two.md").write_text(TWO + "\nMore words.\n", encoding="utf-8")
    again = build(tiny, tmp_path / "warm", warm)
    assert (warm.hits, warm.misses) == (1, 3)  # only the edited page was rendered
    assert again == build(tiny, tmp_path / "cold", None)
    index = (tmp_path / "warm" / "search" / "search_index.json").read_text()
    assert "More words." in index and "A figure the search reads." in index
    # The search read the edited page's figure from its recording, and the theme's files
    # from the one listing of the installed theme.
    assert warm.islands[("island", "search two.html", 0)][1] is not None
    assert len(warm.theme_files) == 1


def test_a_theme_folder_of_the_project_is_listed_every_build(tiny: Path, tmp_path: Path) -> None:
    config = tiny / "mkdocs.yml"
    config.write_text(CONFIG.replace("  name: material", "  name: material\n"
                                     "  custom_dir: overrides"), encoding="utf-8")
    (tiny / "overrides" / "assets").mkdir(parents=True)
    (tiny / "overrides" / "assets" / "first.css").write_text("p {}\n", encoding="utf-8")
    warm = Warm()
    build(tiny, tmp_path / "first", warm)
    (tiny / "overrides" / "assets" / "second.css").write_text("a {}\n", encoding="utf-8")
    again = build(tiny, tmp_path / "warm", warm)
    assert "assets/second.css" in again and warm.theme_files == {}
    assert again == build(tiny, tmp_path / "cold", None)


def test_a_trace_is_parsed_again_only_when_its_bytes_change(tmp_path: Path,
                                                           trace_text: str) -> None:
    warm, path = Warm(), tmp_path / "chapter.trace"
    path.write_text(trace_text, encoding="utf-8")
    schema = SCHEMAS[CHAPTER_TRACE]
    first = warm.trace(path, schema)
    assert warm.trace(path, schema) is first
    path.write_text(trace_text.replace("\n", "\n\n", 1), encoding="utf-8")
    with pytest.raises(LocatedError):  # read again, and this text is not a trace
        warm.trace(path, schema)
    path.write_text(trace_text, encoding="utf-8")
    assert warm.trace(path, schema) is first  # a failed parse keeps nothing


def test_an_edited_snippet_source_renders_its_page_again(tiny: Path, tmp_path: Path) -> None:
    warm = Warm()
    build(tiny, tmp_path / "first", warm)
    (tiny / "src" / "listing.py").write_text("LISTED = 'second'\n", encoding="utf-8")
    build(tiny, tmp_path / "warm", warm)
    assert warm.hits == 1 and "second" in (tmp_path / "warm" / "one.html").read_text()


def test_a_snippet_saved_while_its_page_renders_is_read_again(
        tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pymdownx.snippets import SnippetPreprocessor

    listing = tiny / "src" / "listing.py"
    read_lines = SnippetPreprocessor.read_lines

    def read_then_save(self: object, path: str) -> list[str]:
        lines = read_lines(self, path)
        listing.write_text("LISTED = 'saved meanwhile'\n", encoding="utf-8")  # an editor
        return lines

    monkeypatch.setattr(SnippetPreprocessor, "read_lines", read_then_save)
    warm = Warm()
    build(tiny, tmp_path / "first", warm)  # rendered from the text read before the save
    monkeypatch.setattr(SnippetPreprocessor, "read_lines", read_lines)
    again = build(tiny, tmp_path / "warm", warm)
    assert "saved meanwhile" in (tmp_path / "warm" / "one.html").read_text()
    assert again == build(tiny, tmp_path / "cold", None)


def test_a_changed_configuration_renders_every_page_again(tiny: Path, tmp_path: Path) -> None:
    warm = Warm()
    build(tiny, tmp_path / "first", warm)
    config = tiny / "mkdocs.yml"
    config.write_text(CONFIG.replace("permalink: true", "permalink: false"), encoding="utf-8")
    assert build(tiny, tmp_path / "warm", warm) == build(tiny, tmp_path / "cold", None)
    assert warm.hits == 0


def test_a_removed_anchor_fails_the_page_linking_to_it(tiny: Path, tmp_path: Path) -> None:
    # one.md is reused from the memo, yet its link is checked against this build's two.md.
    warm = Warm()
    build(tiny, tmp_path / "first", warm)
    (tiny / "docs" / "two.md").write_text("# Two\n\nNo parts.\n", encoding="utf-8")
    with pytest.raises(BuildError, match="second-part"):
        build(tiny, tmp_path / "warm", warm)
    assert warm.hits == 1


def test_a_page_linking_to_a_removed_page_fails(tiny: Path, tmp_path: Path) -> None:
    # one.md is unchanged, but the site's file list is not: its link must be checked again.
    (tiny / "docs" / "three.md").write_text("# Three\n", encoding="utf-8")
    one = tiny / "docs" / "one.md"
    one.write_text(ONE + "\nAnd [a third](three.md).\n", encoding="utf-8")
    warm = Warm()
    build(tiny, tmp_path / "first", warm)
    (tiny / "docs" / "three.md").unlink()
    with pytest.raises(BuildError, match=r"three\.md"):
        build(tiny, tmp_path / "warm", warm)


def test_a_render_that_warned_warns_again(tiny: Path, tmp_path: Path) -> None:
    (tiny / "docs" / "two.md").write_text(TWO + "\n[gone](missing.md)\n", encoding="utf-8")
    warm = Warm()
    for attempt in ("first", "second"):
        with pytest.raises(BuildError, match=r"missing\.md"):
            build(tiny, tmp_path / attempt, warm)
    assert "two.md" not in warm.pages


def test_mkdocs_methods_come_back_after_a_failed_build(tiny: Path, tmp_path: Path) -> None:
    from material.plugins.search.plugin import Parser, SearchIndex
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page
    from mkdocs.theme import Theme
    from pymdownx.snippets import SnippetPreprocessor

    def patched() -> tuple[object, ...]:
        return (Page.render, SearchIndex.add_entry_from_context, Theme.get_env,
                SnippetPreprocessor.read_lines, Parser.feed, Files.add_files_from_theme)

    def classes() -> list[dict[str, object]]:
        return [dict(vars(cls)) for cls in (Page, SearchIndex, Theme, SnippetPreprocessor,
                                            Parser, Files)]

    before, owned = patched(), classes()
    (tiny / "docs" / "one.md").write_text("[gone](missing.md)\n", encoding="utf-8")
    with pytest.raises(BuildError):
        build(tiny, tmp_path / "site", Warm())
    assert patched() == before
    assert classes() == owned
    # Nothing left behind, not even the inherited method that was wrapped.
    assert vars(Parser).get("feed", None) is not HTMLParser.feed


@pytest.mark.slow
def test_the_gates_memo_keeps_findings_and_sees_new_pages(site_copy: Path,
                                                          golden_traces: TraceSet) -> None:
    memo: dict[object, object] = {}
    page = site_copy / "building.html"
    page.write_text(page.read_text(encoding="utf-8").replace(
        "</article>", "<p>A typed number, 0.42.</p></article>", 1), encoding="utf-8")
    first = audit.audit_site(site_copy, golden_traces, memo=memo)
    assert [f.message for f in first if "0.42" in f.message]
    assert audit.audit_site(site_copy, golden_traces, memo=memo) == first
    page.write_text(page.read_text(encoding="utf-8").replace("0.42", "0.43"), encoding="utf-8")
    assert [f.message for f in audit.audit_site(site_copy, golden_traces, memo=memo)
            if "0.43" in f.message]
    # links: a page reused from the memo is checked against the anchors of this site.
    assert links.check_links(site_copy, memo=memo) == []
    target = site_copy / "trace.html"
    target.write_text(target.read_text(encoding="utf-8").replace(
        'id="gradient-flow-v2"', 'id="renamed"'), encoding="utf-8")
    assert "labs/gradient-flow.html" in {f.page for f in links.check_links(site_copy, memo=memo)}


@pytest.mark.slow
def test_the_chapter_rebuilt_warm_is_the_chapter_built_cold(site_build: BuiltSite,
                                                            tmp_path: Path) -> None:
    """The real site: after a sentence is added to one page, a warm rebuild (the other pages
    reused) writes every file a cold build writes, byte for byte."""
    root = project_copy(tmp_path)
    trace_dir = site_build.build_dir / "trace"
    settings = BuildSettings(
        traces={trace_id: trace_dir / schema.file_name for trace_id, schema in SCHEMAS.items()},
        report=trace_dir / REPORT_NAME, generated=site_build.build_dir / "generated")
    assert CHAPTER_TRACE in settings.traces

    def built(out: Path, warm: Warm | None) -> dict[str, str]:
        memo = warm.renders if warm is not None else None
        mkdocs_build(root, out, dataclasses.replace(settings, page_memo=memo),
                     "http://127.0.0.1:8000/", warm)
        return tree_digest(out)

    warm = Warm()
    built(tmp_path / "first", warm)
    page = root / "docs" / "labs" / "gradient-flow.md"  # the page with the most figures
    page.write_text(page.read_text(encoding="utf-8") + "\nOne more sentence.\n",
                    encoding="utf-8")
    again = built(tmp_path / "warm", warm)
    assert warm.hits == len(list((root / "docs").rglob("*.md"))) - 1
    assert again == built(tmp_path / "cold", None)
    # One entry per page's rendering, and one per figure put in after the conversion.
    pages = {path.relative_to(root).as_posix() for path in (root / "docs").rglob("*.md")}
    figures = {slot[1:] for slot in warm.renders if slot[0] == "figure"}
    assert set(warm.renders) - {("figure", *f) for f in figures} == {
        (page, "render") for page in pages}
    assert {kind for kind, _ in figures} == {"svg", "values", "explorer"}
    # The search read the edited page's figures from their recordings.
    replayed = [events for (_, page_name, _), (_, events) in warm.islands.items()
                if page_name == "search labs/gradient-flow.html"]
    assert len(replayed) > 1 and None not in replayed


def test_the_audit_memo_follows_the_drawings_and_the_lock(
        tmp_path: Path, trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<article class="md-content__inner md-typeset"><p>Words.</p></article>\n',
        encoding="utf-8")
    audited: list[str] = []
    real = audit.audit_page
    monkeypatch.setattr(audit, "audit_page",
                        lambda page, *args: audited.append(page) or real(page, *args))
    lock = tmp_path / "project" / "requirements" / "lock.txt"
    lock.parent.mkdir(parents=True)
    lock.write_text("numpy==2.0.0\n", encoding="utf-8")
    monkeypatch.setattr(audit, "ROOT", tmp_path / "project")
    memo: dict[object, object] = {}

    def run(rendered: dict[str, str]) -> None:
        audit.audit_site(site, trace, references={}, rendered=rendered, memo=memo)

    run({"forward": "<svg/>"})
    run({"forward": "<svg/>"})
    assert audited == ["index.html"]
    run({"forward": "<svg><g/></svg>"})  # another drawing of a diagram
    lock.write_text("numpy==2.0.1\n", encoding="utf-8")  # another lock
    run({"forward": "<svg><g/></svg>"})
    assert audited == ["index.html"] * 3


def _class_attributes(packages: tuple[str, ...]) -> dict[tuple[type, str], object]:
    """Every attribute of every class defined in the loaded modules of ``packages``."""
    found: dict[tuple[type, str], object] = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in packages:
            continue
        for cls in list(vars(module).values()):
            if inspect.isclass(cls) and cls.__module__ == name:
                found.update(((cls, attribute), value) for attribute, value in vars(cls).items())
    return found


def test_every_method_serve_wraps_is_named_on_the_building_page() -> None:
    """A move to another platform starts from the list on the building page: whatever
    ``Warm.mkdocs`` replaces while a rebuild runs must be on it."""
    packages = ("mkdocs", "material", "pymdownx", "markdown", "jinja2")
    warm = Warm()
    with warm.mkdocs():  # imports what it wraps
        pass
    before = _class_attributes(packages)
    with warm.mkdocs():
        during = _class_attributes(packages)
    wrapped = sorted(f"{cls.__name__}.{attribute}" for (cls, attribute), value in before.items()
                     if during.get((cls, attribute)) is not value)
    assert wrapped, "Warm.mkdocs wraps nothing"
    assert _class_attributes(packages) == before  # and puts everything back
    page = (ROOT / "docs" / "building.md").read_text(encoding="utf-8")
    assert [name for name in wrapped if f"`{name}`" not in page] == []
