"""End-to-end tests for build_site.py: the command line, whole builds and "up to date".

Builds run in fresh processes exactly as a user runs them, always with ``--build-dir`` and
``--out`` in a pytest temp folder. The session's site (tests/conftest.py) is the one built
from the golden trace and learner report; tests that need a changed page work on a copy of the
project. Failed builds are tested in tests/test_bad_input.py, serving in tests/test_serve.py
(which imports ``run`` and ``project_copy`` from here).
"""

from __future__ import annotations

import html
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from paths import GOLDEN_REPORT, GOLDEN_TRACE, ROOT
from site_support import (
    BuiltSite,
    build,
    folder_listing,
    listing_changes,
    project_copy,
    published_traces,
    run,
    tree_digest,
)

from sitebuild import build as site_build
from sitebuild import check as site_check
from sitebuild.engine_runs import engine_jobs
from sitebuild.errors import BuildError
from sitebuild.paths import CHAPTER_TRACE
from sitebuild.progress import Progress
from tracefile import SCHEMAS
from tracefile.schemas.numerics import numerics_of

TRACE_NAME = GOLDEN_TRACE.name
PHASES = ("engine", "parse", "generate", "render", "mkdocs", "gates", "publish", "total")
PHASE_LINE = re.compile(r"\[build\] (\S+) +\d+\.\d\ds(  .*)?")
DETAIL_LINE = re.compile(r"\[build\]   (\S+) +(\d+\.\d\ds|cached|recorded)")
UP_TO_DATE = re.compile(r"\[build\] total +\d+\.\d\ds  up to date: \S+ was built from these "
                        r"inputs \(--force rebuilds\)")


def phases(stdout: str) -> list[str]:
    """The phase named by each progress line, detail lines left out."""
    return [PHASE_LINE.fullmatch(line).group(1) for line in stdout.splitlines()
            if not line.startswith("[build]   ")]


def details(stdout: str) -> dict[str, str]:
    """The engine's detail lines: job name → seconds (``0.21s``) or ``cached``."""
    return {m.group(1): m.group(2) for line in stdout.splitlines()
            if (m := DETAIL_LINE.fullmatch(line))}


# ---- the command line ----


@pytest.mark.parametrize("command", [[], ["build"], ["serve"], ["render"], ["check"]])
def test_every_command_has_help(command: list[str]) -> None:
    done = run([*command, "--help"])
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: build_site.py")
    if command:
        assert f"build_site.py {command[0]}" in done.stdout


@pytest.mark.parametrize("args", [["build", "--no-such-option"], ["build", "--report", "x"],
                                  ["deploy"], ["serve", "--port", "99999"],
                                  ["serve", "--port", "0"], ["serve", "--port", "http"]])
def test_usage_errors_exit_with_two(args: list[str]) -> None:
    # Checked before anything is built: a bad --port used to build the whole site first.
    done = run(args)
    assert done.returncode == 2 and "usage:" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("command", [["render"], ["build", "--out", "{tmp}/new-site"],
                                     ["check", "--site", "{tmp}/site"]])
def test_a_build_folder_of_the_users_is_refused_and_nothing_in_it_deleted(
        command: list[str], tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    for name, text in (("pages/draft.md", "x"), ("trace/notes.txt", "y")):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>a site</p>")  # for check to get so far
    done = run([*(part.format(tmp=tmp_path) for part in command), "--build-dir", str(folder)])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == (f"{folder}/pages: is in a folder no build has used (it has no "
                           f".lock); refusing to build in {folder} and replace what it holds: "
                           "choose an empty or new --build-dir\n")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == [
        "pages", "pages/draft.md", "trace", "trace/notes.txt"]


def test_dev_help_prints_the_header_only() -> None:
    done = subprocess.run([str(ROOT / "dev"), "--help"], capture_output=True, text=True,
                          timeout=30)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0].startswith("Project entry point")
    assert lines[-1].strip().startswith("./dev setup") and "set -" not in done.stdout


def test_a_failing_phase_still_gets_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    progress = Progress("build")
    with progress.phase("parse") as notes:
        notes.append("fine")
    with pytest.raises(ValueError), progress.phase("mkdocs"):
        raise ValueError("boom")
    progress.detail("residual-connections-v2   cached")
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\[build\] parse +\d+\.\d\ds  fine", lines[0]), lines
    assert re.fullmatch(r"\[build\] mkdocs    FAILED +\d+\.\d\ds", lines[1]), lines
    assert lines[2] == "[build]   residual-connections-v2   cached"
    assert len(lines) == 3 and progress.current == "mkdocs"


def test_no_phase_starts_after_a_stopping_signal(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # As if SIGTERM had arrived and Python had dropped its exception (tests/test_interrupts.py).
    from sitebuild import interrupts

    monkeypatch.setattr(interrupts, "_received", [signal.SIGTERM])
    progress, ran = Progress("build"), []
    with pytest.raises(KeyboardInterrupt), progress.phase("publish"):
        ran.append("publish")
    assert ran == [] and progress.current == "publish" and capsys.readouterr().out == ""


def test_the_output_guard_sees_every_change(tmp_path: Path) -> None:
    # conftest.py compares the repository's build/ and site/ with these; it must be able to fail.
    folder = tmp_path / "build"
    assert folder_listing(folder) is None
    assert listing_changes(None, None) == []
    folder.mkdir()
    (folder / "kept").write_text("a")
    before = folder_listing(folder)
    assert listing_changes(None, before) == ["created"]
    assert listing_changes(before, folder_listing(folder)) == []
    (folder / "sub").mkdir()
    (folder / "sub" / "new.html").write_text("b")
    (folder / "kept").write_text("changed")
    changes = listing_changes(before, folder_listing(folder))
    assert {"new: sub", "new: sub/new.html", "changed: kept"} <= set(changes), changes


# ---- the session's build: golden trace and learner report ----


@pytest.mark.slow
def test_the_three_pages_carry_traced_values(built_site: Path) -> None:
    for page in ("index.html", "trace.html", "building.html"):
        assert (built_site / page).is_file(), page
    index = (built_site / "index.html").read_text()
    # Shown to four significant figures; the stored list rides along only as it differs.
    assert re.search(r'<span class="tv" data-trace="residual-connections-v2:FORWARD\.output" '
                     r'data-what="[^"]+" data-format="sig4" data-exact="\[1\.0,-3\.25\]">'
                     r'\[1, \u22123\.25\]</span>', index)
    assert 'data-trace="residual-connections-v2:STACK[4].residual"' in index
    assert index.count('class="residual-diagram"') >= 4
    # The math arrived typeset (sitebuild.typeset_math): no TeX left to a script.
    assert index.count('<span class="katex">') > 20 and "\\(" not in index
    building = (built_site / "building.html").read_text()
    assert 'data-trace="residual-connections-v2:FORWARD.output"' in building
    assert 'name="generator"' not in index


@pytest.mark.slow
def test_every_number_taken_from_a_list_says_which_in_words(built_site: Path) -> None:
    # "stream-norm[6]" means nothing to a reader: the key's along words say "depth 64".
    span = re.compile(r'data-trace="([^":]+):([A-Z-]+)[^"]*\.([a-z-]+)\[\d+\]" data-what="([^"]*)"')
    seen = 0
    for page in built_site.rglob("*.html"):
        for trace_id, kind, key, what in span.findall(page.read_text(encoding="utf-8")):
            if SCHEMAS[trace_id].specs[kind].by_name[key].kind == "vector":
                assert "Item " not in what, (page.name, kind, key, what)
                seen += 1
    assert seen > 100


@pytest.mark.slow
def test_the_trace_page_shows_report_raw_trace_and_download(built_site: Path) -> None:
    page = (built_site / "trace.html").read_text()
    assert f'href="trace/{TRACE_NAME}"' in page
    assert (built_site / "trace" / TRACE_NAME).read_bytes() == GOLDEN_TRACE.read_bytes()
    for line in GOLDEN_REPORT.read_text().splitlines()[:3]:  # the report given with --report
        assert html.escape(line, quote=False) in page, line
    assert "No learner report" not in page
    assert 'data-shown-html-src="assets/traces/residual-connections-v2.js"' in page
    listing = (built_site / "assets/traces/residual-connections-v2.js").read_text()
    assert "TRACE residual-connections-v2 BEGIN" in listing
    assert 'id="trace-grammar"' in page


@pytest.mark.slow
def test_one_progress_line_per_phase(site_build: BuiltSite) -> None:
    lines = site_build.stdout.splitlines()
    assert phases(site_build.stdout) == list(PHASES), lines
    # Every trace comes from its record (or a run) even with --trace: the given trace is held
    # against the engine's own.
    assert set(details(site_build.stdout)) == {job.name for job in engine_jobs()}
    engine = next(line for line in lines if line.startswith("[build] engine "))
    assert re.search(r"  \d+ trace\(s\): \d+ recorded$", engine), engine
    assert any(line.endswith(": equals the engine's run") for line in lines), lines
    # One line, and only off the reference numerics, names the labs computed with other kernels.
    off = [trace.trace_id for trace in published_traces(site_build.site, CHAPTER_TRACE)
           if (numerics := numerics_of(trace)) is not None and not numerics.reference]
    notes = [line for line in lines if "off the reference numerics: " in line]
    assert len(notes) == (1 if off else 0), notes
    assert all(trace_id in notes[0] for trace_id in off), notes
    generate = next(line for line in lines if line.startswith("[build] generate "))
    # Whether this build drew the figures depends on what the session's shared cache held.
    assert re.search(r"  \d+ file\(s\) in \S+ \(cache (hit|miss)\)$", generate), generate
    render = next(line for line in lines if line.startswith("[build] render "))
    assert re.search(r"  \d+ file\(s\) changed in \S+/pages$", render), render
    assert lines[-1].endswith(f"published {site_build.site}"), lines[-1]


@pytest.mark.slow
def test_a_report_beside_the_trace_is_not_used(tmp_path: Path) -> None:
    # With --trace, the report is the one named by --report or none at all.
    given = tmp_path / "given"
    given.mkdir()
    trace = Path(shutil.copy(GOLDEN_TRACE, given / TRACE_NAME))
    shutil.copy(GOLDEN_REPORT, given / GOLDEN_REPORT.name)
    out = tmp_path / "site"
    done = build(out, tmp_path / "build", traces=(trace,), report=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(SCHEMAS)} trace(s), no report" in done.stdout
    page = (out / "trace.html").read_text()
    assert "No learner report with this trace" in page
    assert GOLDEN_REPORT.read_text().splitlines()[1] not in page


# ---- up to date ----


@pytest.mark.slow
def test_an_unchanged_build_is_up_to_date_and_force_rebuilds(tmp_path: Path) -> None:
    out, build_dir = tmp_path / "site", tmp_path / "build"
    engine = {"traces": (), "report": None}  # the default build: the engine writes the trace
    first = build(out, build_dir, **engine)
    assert first.returncode == 0, first.stdout + first.stderr
    published = tree_digest(out)
    assert set(details(first.stdout)) == {job.name for job in engine_jobs()}

    again = build(out, build_dir, **engine)
    assert again.returncode == 0, again.stdout + again.stderr
    assert UP_TO_DATE.fullmatch(again.stdout.splitlines()[-1]), again.stdout
    assert "mkdocs" not in phases(again.stdout), again.stdout
    assert set(details(again.stdout).values()) == {"recorded"}, again.stdout
    assert tree_digest(out) == published

    forced = build(out, build_dir, **engine, extra=["--force"])
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert phases(forced.stdout) == list(PHASES), forced.stdout
    # Built without an address: the last line says where the site works (its 404 page).
    assert forced.stdout.splitlines()[-1].endswith(
        f"published {out} for the root of a host (--site-url URL for a sub-path)"), forced.stdout
    assert tree_digest(out) == published

    (out / "building.html").write_text("tampered\n")  # the site no longer is what was published
    repaired = build(out, build_dir, **engine)
    assert "mkdocs" in phases(repaired.stdout), repaired.stdout
    assert tree_digest(out) == published


@pytest.mark.slow
def test_an_edited_page_is_not_up_to_date(tmp_path: Path) -> None:
    proj = project_copy(tmp_path)
    out, build_dir = tmp_path / "site", tmp_path / "build"
    first = build(out, build_dir, project=proj)
    assert first.returncode == 0, first.stdout + first.stderr
    page = proj / "docs" / "building.md"
    page.write_text(page.read_text() + "\nA sentence added after publishing.\n")
    edited = build(out, build_dir, project=proj)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    assert "up to date" not in edited.stdout
    assert "mkdocs" in phases(edited.stdout), edited.stdout
    assert "A sentence added after publishing." in (out / "building.html").read_text()
    again = build(out, build_dir, project=proj)
    assert UP_TO_DATE.fullmatch(again.stdout.splitlines()[-1]), again.stdout


# ---- the README's main command, with the real engine ----


@pytest.mark.slow
def test_readme_build_runs_the_engine_end_to_end(engine_build: BuiltSite) -> None:
    stdout, out = engine_build.stdout, engine_build.site
    assert phases(stdout) == list(PHASES), stdout
    assert "(cache miss)" in stdout  # a cache of its own: everything drawn
    jobs = [job.name for job in engine_jobs()]
    engine = next(line for line in stdout.splitlines() if line.startswith("[build] engine "))
    # A fresh clone reads every trace from its record: nothing trains.
    assert re.search(rf"  {len(jobs)} trace\(s\): {len(jobs)} recorded$", engine), stdout
    assert "computing" not in stdout
    assert list(details(stdout)) == jobs and set(details(stdout).values()) == {"recorded"}
    trace = (engine_build.build_dir / "trace" / TRACE_NAME).read_bytes()
    assert (out / "trace" / TRACE_NAME).read_bytes() == trace
    page = (out / "trace.html").read_text()
    assert "No learner report" not in page
    report = (engine_build.build_dir / "trace" / GOLDEN_REPORT.name).read_text()
    assert html.escape(report.splitlines()[1], quote=False) in page


def test_an_os_error_in_a_phase_names_the_file_and_the_phase(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BuildError) as raised, Progress("build").phase("publish"):
        raise PermissionError(13, "Permission denied", "/srv/site")
    assert str(raised.value) == "/srv/site: publish: Permission denied"
    assert capsys.readouterr().out.startswith("[build] publish   FAILED ")


def test_a_build_folder_inside_the_output_folder_is_refused(tmp_path: Path) -> None:
    import build_site

    args = build_site.parser().parse_args(
        ["build", "--out", str(tmp_path / "site"), "--build-dir", str(tmp_path / "site" / "b")])
    with pytest.raises(BuildError, match="the build folder is inside the output folder"):
        build_site.run(args, build_site.Progress("build"))
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(("mine", "theirs", "found"), [
    (b"a\nb\n", b"a\nb\n", None),
    (b"a\nx\n", b"a\nb\n", (2, "'b'")),
    (b"a\nb\nextra\n", b"a\nb\n", (3, "''")),
    (b"a\nb\n", b"a\nb\nmore\n", (3, "'more'")),
    (b"a\nb\nc\n", b"a\nb\n", (3, "''")),
    (b"a\nb\n", b"a\nb", (3, "(nothing: its trace ends earlier)")),
])
def test_first_difference_names_the_line_and_what_the_engine_writes(
        mine: bytes, theirs: bytes, found: tuple[int, str] | None) -> None:
    assert site_build.first_difference(mine, theirs) == found


def test_a_trace_unlike_the_engines_is_refused_unless_allowed(tmp_path: Path) -> None:
    given = tmp_path / "given.trace"
    given.write_bytes(b"a\nx\n")
    assert site_build.same_as_engine(given, b"a\nx\n", False, "why") is True
    assert site_build.same_as_engine(given, b"a\nb\n", True, "why") is False
    with pytest.raises(BuildError) as raised:
        site_build.same_as_engine(given, b"a\nb\n", False, site_check.CHECK_PURPOSE)
    assert str(raised.value) == (f"{given}:2: differs from a fresh run of the engine, which "
                                 f"writes 'b' here; {site_check.CHECK_PURPOSE}")
