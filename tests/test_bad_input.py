"""Failed builds are atomic and one line: every way a build can fail, in one table.

Each case makes one defect — a bad trace or learner report, a broken page (on a copy of the
project), a missing tool — and builds over a copy of a good site, in the test's own process;
only a copy whose Python was edited builds in a child process, since its own code must run.
Every failure must pass `site_support.assert_failed_cleanly`: exit 1, no traceback, exactly
one located line on stderr (`FILE:LINE: `, `FILE: ` or `PHASE: `), the failed phase named last
on stdout, and the previous site byte-identical with nothing left beside it. Each case also
says where its line must point. Hostile but valid parameter names must build and show up
escaped, never as markup.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from golden_support import scaled_records
from paths import GOLDEN_REPORT, GOLDEN_TRACE, ROOT
from site_support import Published, assert_failed_cleanly, build, build_or_fail, project_copy

# Quotes, markup, an entity, Jinja braces, Markdown and math characters: all legal in a name.
HOSTILE = "q\"u'o<evil>&amp;{{7*7}}{%raw%}\\*_$z$`<!--"
PAGE = "docs/building.md"


def _golden() -> str:
    return GOLDEN_TRACE.read_text(encoding="utf-8")


def _replace(old: str, new: str) -> Callable[[], bytes]:
    def make() -> bytes:
        text = _golden()
        assert old in text, old
        return text.replace(old, new).encode()

    return make


def _duplicate(prefix: str) -> bytes:
    lines = _golden().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    return "".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]).encode()


@dataclass(frozen=True)
class Attempt:
    """One failing build: its options (see ``site_support.build``), the line it must print."""

    line: str  # a regex the stderr line must match from its start
    options: dict[str, object] = field(default_factory=dict)
    in_process: bool = True  # False: the build runs edited Python, in its own process


@dataclass(frozen=True)
class Failure:
    """A failure case: the phase that fails and how to set the defect up."""

    phase: str
    setup: Callable[[Path, Path], Attempt]  # (tmp_path, previous site) → the attempt


def bad_trace(make: Callable[[], bytes], where: str = "") -> Failure:
    """A defective trace given with --trace: the line names the file and a line in it."""

    def setup(tmp: Path, out: Path) -> Attempt:
        trace = tmp / "bad.trace"
        trace.write_bytes(make())
        return Attempt(re.escape(f"{trace}:") + r"\d+: " + where, {"traces": (trace,)})

    return Failure("engine", setup)


def page_edit(phase: str, added: str, line: str, generator: str = "mkdocs") -> Failure:
    """A line appended to docs/building.md in a project copy, built by ``generator``.

    ``line`` is formatted with ``out`` (the site folder) and ``at`` (the added line's number).
    """

    def setup(tmp: Path, out: Path) -> Attempt:
        proj = project_copy(tmp)
        page = proj / PAGE
        text = page.read_text(encoding="utf-8")
        page.write_text(f"{text}\n{added}\n", encoding="utf-8")
        at = text.count("\n") + 2
        extra = ("--generator", generator) if generator != "mkdocs" else ()
        return Attempt(line.format(out=re.escape(str(out)), at=at),
                       {"project": proj, "extra": extra})

    return Failure(phase, setup)


def code_edit(phase: str, path: str, old: str, new: str, line: str) -> Failure:
    """``old`` replaced by ``new`` in the module ``path`` of a project copy."""

    def setup(tmp: Path, out: Path) -> Attempt:
        proj = project_copy(tmp)
        module = proj / path
        text = module.read_text(encoding="utf-8")
        assert old in text, old
        module.write_text(text.replace(old, new), encoding="utf-8")
        return Attempt(line, {"project": proj}, in_process=not path.endswith(".py"))

    return Failure(phase, setup)


def linked_outside(tmp: Path, out: Path) -> Attempt:
    """A file of docs/ that is a symbolic link to a private file outside the project."""
    proj = project_copy(tmp)
    (tmp / "private.txt").write_text("SECRET")
    (proj / "docs" / "assets" / "notes.txt").symlink_to(tmp / "private.txt")
    return Attempt(r"docs/assets/notes\.txt: is a symbolic link \(to .*private\.txt\)",
                   {"project": proj})


def notebook_edit(phase: str, added: str, line: str) -> Failure:
    """Cells appended to the gradients lab's notebook source in a project copy; ``line`` is
    formatted with ``last`` (the last added line's number)."""

    def setup(tmp: Path, out: Path) -> Attempt:
        proj = project_copy(tmp)
        source = proj / "notebooks" / "gradient-flow.py"
        text = source.read_text(encoding="utf-8")
        source.write_text(f"{text}\n{added}", encoding="utf-8")
        last = text.count("\n") + 1 + added.count("\n")
        return Attempt(line.format(last=last), {"project": proj})

    return Failure(phase, setup)


def notebook_linked_outside(tmp: Path, out: Path) -> Attempt:
    """A notebook source that is a symbolic link to a private file outside the project."""
    proj = project_copy(tmp)
    (tmp / "private.py").write_text("# %%\nsecret = 1\n")
    (proj / "notebooks" / "private.py").symlink_to(tmp / "private.py")
    return Attempt(r"notebooks/private\.py: is a symbolic link or not a file", {"project": proj})


def _line_of(path: str, text: str) -> int:
    """The number of the first line of the project's ``path`` holding ``text``."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _a_file(tmp: Path) -> Path:
    (tmp / "a-file").write_text("not a folder")
    return tmp / "a-file"


def given_options(phase: str, line: str, **options: object) -> Failure:
    return Failure(phase, lambda tmp, out: Attempt(line, dict(options)))


def no_tools(tmp: Path, out: Path) -> Attempt:
    (tmp / "no-tools").mkdir()
    return Attempt(re.escape("dot: Graphviz `dot` is not on PATH"),
                   {"env": {"PATH": str(tmp / "no-tools")}})


BROKEN_LINK = (r"docs/building\.md:{{at}}: \[links\] broken .*{target}.* "
               r"\(built into {out}/building\.html:\d+\)$")
FAILURES: dict[str, Failure] = {
    # the trace given with --trace
    "truncated": bad_trace(lambda: _golden().encode()[: len(_golden()) // 2],
                           "(?i:.*(end|footer))"),
    "trace-footer-missing": bad_trace(lambda: _golden().rsplit("TRACE", 1)[0].encode(),
                                      "(?i:.*(footer|end))"),
    "wrong-version": bad_trace(_replace("residual-connections-v2", "residual-connections-v3"),
                               ".*residual-connections-v2"),
    "nan": bad_trace(lambda: re.sub(r"max-error=\S+", "max-error=nan", _golden()).encode(),
                     "(?i:.*nan)"),
    "nan-step": bad_trace(_replace("step=1e-06", "step=nan"), "(?i:.*nan)"),
    "nan-in-vector": bad_trace(_replace("FORWARD input=[2.0,-1.0]", "FORWARD input=[2.0,nan]")),
    "unknown-record": bad_trace(_replace("CONFIG", "CONFIG-V2")),
    "duplicate-record": bad_trace(lambda: _duplicate("FORWARD ")),
    "wrong-vector-length": bad_trace(_replace("weight=[0.5,-1.0,2.0,0.25]",
                                              "weight=[0.5,-1.0,2.0]")),
    "non-utf8": bad_trace(lambda: _golden().encode().replace(b"known-residual",
                                                             b"known-\xff\xferesidual")),
    "10mb-line": bad_trace(_replace("FORWARD input=[2.0,-1.0]",
                                    "FORWARD input=[" + "1.0," * 2_621_440 + "1.0]")),
    "empty": bad_trace(lambda: b""),
    "newline-in-name": bad_trace(_replace("PARAMETER name=residual.branch.weight",
                                          "PARAMETER name=residual.branch\n.weight")),
    # well-formed and self-consistent, but not what the engine computes
    "false-trace": bad_trace(_replace("step=1e-06 tolerance", "step=2e-06 tolerance"),
                             re.escape("differs from a fresh run of the engine, which writes '")
                             + ".*step=1e-06.*' here; refusing to publish"),
    "too-many-records": bad_trace(lambda: scaled_records(_golden(), 100_000).encode(),
                                  "too many records: more than "),
    "same-trace-twice": given_options(
        "engine", re.escape(f"{GOLDEN_TRACE}:1: --trace names residual-connections-v2 twice"),
        traces=(GOLDEN_TRACE, GOLDEN_TRACE)),
    "cache-dir-is-a-file": Failure("engine", lambda tmp, out: Attempt(
        re.escape(f"{tmp}/a-file: --cache-dir names a file, not a folder"),
        {"extra": ("--cache-dir", str(_a_file(tmp))), "shared_cache": False})),
    # the learner report given with --report
    "missing-report": given_options(
        "parse", re.escape(f"{GOLDEN_REPORT}.missing: cannot read the learner report"),
        report=Path(f"{GOLDEN_REPORT}.missing")),
    # a broken page
    "misspelt-value-path": page_edit(
        "render", 'The value {{ tv("FORWARD.no-such-key") }} is misspelt.',
        rf"{PAGE}:{{at}}: .*FORWARD\.no-such-key"),
    # links are the links gate's, on the built pages (MkDocs' own check only informs)
    "markdown-link": page_edit("gates", "See [the missing page](missing.md).",
                               BROKEN_LINK.format(out="{out}", target="missing\\.md")),
    "markdown-link-under-zensical": page_edit(
        "zensical", "See [the missing page](missing.md).",
        rf"{PAGE}:{{at}}: zensical: Warning: page does not exist$", generator="zensical"),
    "typed-number": page_edit("gates", "A typed number, 0.42, has no provenance.",
                              r"docs/building\.md:{at}: \[audit\] .*0\.42.* "
                              r"\(built into {out}/building\.html:\d+\)$"),
    "superscript-number": page_edit("gates", "A power typed as 10³, and a half, ½.",
                                    r"docs/building\.md:{at}: \[audit\] .*'10³'"),
    "number-as-entities": page_edit("gates", "Typed as references: &#52;&#50; of them.",
                                    r"docs/building\.md:{at}: \[audit\] .*'42'"),
    "computed-number": page_edit("render", "Computed: {{ 6 * 7 }} of them.",
                                 rf"{PAGE}:{{at}}: an expression shows the number 42"),
    "exactly-a-rounded-value": page_edit(
        "render", 'It keeps exactly {{ tv("RETENTION.residual") }} of the gradient.',
        rf"{PAGE}:{{at}}: a sentence saying 'exactly' shows "
        r"residual-connections-v2:RETENTION\.residual as 0\.3164, stored as 0\.31640625"),
    "symlink-in-docs": Failure("render", linked_outside),
    "symlink-in-notebooks": Failure("render", notebook_linked_outside),
    # every marker jupytext reads as a Markdown cell is held to the no-typed-numbers rule
    "notebook-md-marker": notebook_edit("render", "# %% [md]\n# After 42 steps\n",
                                        r"notebooks/gradient-flow\.py:{last}: .*'42'"),
    "notebook-too-deep": notebook_edit("render", "# %%\nx = " + "1+" * 100_000 + "1\n",
                                       r"notebooks/gradient-flow\.py: .*nested too deeply"),
    # math that would link, load or carry HTML is refused at its line, as is a huge formula
    "formula-that-links": page_edit("mkdocs", r"See $\href{javascript:alert(1)}{x}$ here.",
                                    rf"{PAGE}:{{at}}: .*\\href is not allowed in the site's math"),
    "huge-broken-formula": page_edit("mkdocs", r"$\frac{x" + "y" * 800_000 + "$",
                                     rf"{PAGE}:{{at}}: KaTeX cannot typeset"),
    "formula-katex-rejects": page_edit("mkdocs", r"A formula that does not parse: $\frac{x$.",
                                       rf"{PAGE}:{{at}}: KaTeX cannot typeset \$\\frac.x\$"),
    # the page around the article comes from mkdocs.yml, and holds no number either
    "number-in-nav": code_edit("gates", "mkdocs.yml", "  - How this site is built: building.md",
                               "  - How this site is built in 42 steps: building.md",
                               r"mkdocs\.yml:\d+: \[audit\] untagged number '42' in the text "
                               r"around the article"),
    "nav-names-a-missing-page": code_edit(
        "mkdocs", "mkdocs.yml", "  - How this site is built: building.md",
        "  - How this site is built: gone.md",
        rf"mkdocs\.yml:{_line_of('mkdocs.yml', 'How this site is built: building.md')}: nav: "
        r"'gone\.md' is not a page of docs/$"),
    # MkDocs' own validation of its settings, at the line of the key it names
    "mistyped-mkdocs-setting": code_edit(
        "mkdocs", "mkdocs.yml", "use_directory_urls: false", "use_directory_urls: maybe",
        rf"mkdocs\.yml:{_line_of('mkdocs.yml', 'use_directory_urls: false')}: "
        r"use_directory_urls: Expected type: <class 'bool'> but received: <class 'str'>$"),
    "unknown-trace-in-front-matter": code_edit(
        "render", "docs/labs/gradient-flow.md", "trace: gradient-flow-v4", "trace: no-such-v1",
        r"docs/labs/gradient-flow\.md:2: front matter names trace 'no-such-v1'; the site has "),
    "number-in-description": code_edit(
        "gates", "mkdocs.yml", "site_description: An executable textbook chapter",
        "site_description: A 99% executable textbook chapter",
        r"mkdocs\.yml:6: \[audit\] untagged number '99' in the content attribute of <meta>"),
    "typed-code-block": page_edit("render", "```text\nfinal loss = 0.0425 after 3000 steps\n```",
                                  rf"{PAGE}:\d+: a code block typed into the page holds the "
                                  "number '0.0425'"),
    "page-includes-itself": page_edit("render", '--8<-- "docs/building.md"',
                                      rf"{PAGE}:{{at}}: includes 'docs/building\.md'"),
    "ref-to-a-missing-figure": page_edit(
        "render", 'As {{ ref("figure-nowhere") }} shows.',
        rf"{PAGE}:{{at}}: ref\('figure-nowhere'\): no figure, table or equation of the page "),
    "counted-at-render": page_edit("render", "The site has {{ traces | length }} traces.",
                                   rf"{PAGE}:{{at}}: an expression shows the number 3"),
    # raw HTML escapes MkDocs' own link validation: the links gate names the page's line
    "broken-anchor": page_edit("gates", '<p><a href="#no-such-heading">jump</a></p>',
                               BROKEN_LINK.format(out="{out}", target="no-such-heading")),
    "broken-anchor-on-other-page": page_edit(
        "gates", '<p><a href="trace.html#no-such-section">there</a></p>',
        BROKEN_LINK.format(out="{out}", target="no-such-section")),
    "broken-image": page_edit("gates", '<p><img src="missing.png" alt="gone"></p>',
                              BROKEN_LINK.format(out="{out}", target="missing\\.png")),
    # a chart that cannot be drawn: its worker's error stops the build before any page
    "undrawable-chart": code_edit("generate", "diagrams/charts_residual_stream.py",
                                  "SIZE = (4.8, 3.4)", "SIZE = (48.0, 3.4)",
                                  r"diagrams/charts_residual_stream\.py: chart 'rs-[a-z-]+': "
                                  r"a plot's size is a width and a height in inches$"),
    # the tools
    "missing-graphviz": Failure("parse", no_tools),
}


@pytest.fixture
def previous_site(built_site: Path, tmp_path: Path) -> Published:
    """A copy of a good build, alone in its folder, that a failing build must leave alone."""
    return Published.snapshot(Path(shutil.copytree(built_site, tmp_path / "published" / "site")))


@pytest.mark.slow
@pytest.mark.parametrize("case", FAILURES)
def test_a_failed_build_is_one_line_and_keeps_the_previous_site(
    case: str, previous_site: Published, tmp_path: Path
) -> None:
    failure = FAILURES[case]
    attempt = failure.setup(tmp_path, previous_site.path)
    build_dir = tmp_path / "build"
    done = build(previous_site.path, build_dir, in_process=attempt.in_process,
                 **attempt.options)
    line = assert_failed_cleanly(done, previous_site, failure.phase, build_dir)
    assert re.match(attempt.line, line), f"not {attempt.line}:\n{line[:300]}"


class _Markup(HTMLParser):
    """Collects tag names and text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.svg_depth = 0
        self.svg_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.svg_depth += tag == "svg"

    def handle_endtag(self, tag: str) -> None:
        self.svg_depth -= tag == "svg" and self.svg_depth > 0

    def handle_data(self, data: str) -> None:
        (self.svg_text if self.svg_depth else self.text).append(data)


@pytest.mark.slow
def test_hostile_parameter_names_are_escaped(tmp_path: Path) -> None:
    text = _golden().replace("residual.branch.weight", HOSTILE)
    assert text.count(HOSTILE) == 2  # CONFIG.branch-parameter and PARAMETER.name
    trace = tmp_path / "hostile.trace"
    trace.write_text(text, encoding="utf-8")
    # Not the engine's run, so it publishes only as an unverified trace (with its banner).
    site = build_or_fail(tmp_path / "site", tmp_path / "build", traces=(trace,),
                         extra=("--unverified-trace",)).site
    assert "Unverified trace" in (site / "index.html").read_text(encoding="utf-8")
    # Every rendered page opens with it, whichever generator builds them.
    pages = tmp_path / "build" / "pages"
    assert all("Unverified trace" in page.read_text(encoding="utf-8")
               for page in pages.rglob("*.md"))
    seen_in_text = seen_in_svg = False
    for page, html in _pages(site):
        markup = _Markup()
        markup.feed(html)
        assert "evil" not in markup.tags, f"{page}: the name was injected as a tag"
        seen_in_text |= HOSTILE in "".join(markup.text)
        seen_in_svg |= HOSTILE in "".join(markup.svg_text)
    assert seen_in_text, "the hostile name should be shown, escaped, in the page text"
    assert seen_in_svg, "the hostile name should be shown, escaped, in a diagram label"


def _pages(site: Path) -> list[tuple[str, str]]:
    return [(p.relative_to(site).as_posix(), p.read_text(encoding="utf-8"))
            for p in sorted(site.rglob("*.html"))]


def test_the_failure_check_can_fail(tmp_path: Path) -> None:
    # assert_failed_cleanly must reject a success, two lines, a traceback, an unnamed phase,
    # and a touched previous site.
    site = tmp_path / "published" / "site"
    site.mkdir(parents=True)
    (site / "index.html").write_text("old")
    previous = Published.snapshot(site)
    failed = "[build] parse     FAILED  0.01s\n"

    def done(code: int, stderr: str, stdout: str = failed) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], code, stdout, stderr)

    good = done(1, "x.trace:3: bad record\n")
    assert assert_failed_cleanly(good, previous, "parse", tmp_path) == "x.trace:3: bad record"
    for wrong, phase in [(done(0, ""), "parse"), (done(1, "a:1: one\nb:2: two\n"), "parse"),
                         (done(1, "Traceback (most recent call last):\n"), "parse"),
                         (done(1, "no location here\n"), "parse"),
                         (done(1, "x:1: bad\n", "[build] parse  0.01s\n"), "parse"),
                         (done(1, "x:1: bad\n"), "gates")]:
        with pytest.raises(AssertionError):
            assert_failed_cleanly(wrong, previous, phase, tmp_path)
    (site / "index.html").write_text("new")
    with pytest.raises(AssertionError, match="previous site modified"):
        assert_failed_cleanly(good, previous, "parse", tmp_path)
