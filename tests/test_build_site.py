"""End-to-end tests for build_site.py: the command line, whole builds and their failures.

Builds run in fresh processes exactly as a user runs them. A failing build must print one
located line (no traceback), exit with 1 and leave the previously published folder
byte-identical; tests that need a broken page or engine work on a copy of the project.
Serving is tested in tests/test_serve.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from site_support import tree_digest

from sitebuild.paths import CHAPTER_TRACE, trace_file

TRACE_NAME = trace_file(CHAPTER_TRACE)

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
PHASES = ("engine", "parse", "generate", "mkdocs", "gates", "publish", "total")
LINE_ERROR = re.compile(r"^\S+:\d+: \S")
IGNORED = shutil.ignore_patterns("build", "site", ".git", ".venv", "node_modules", "tests",
                                 "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis")


def run(args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None,
        script: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(script or ROOT / "build_site.py"), *args]
    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=300)


def fixture_dir(base: Path) -> Path:
    """A trace (and its learner report beside it) as a user would pass with --trace."""
    base.mkdir(parents=True, exist_ok=True)
    shutil.copy(GOLDEN / TRACE_NAME, base / TRACE_NAME)
    shutil.copy(GOLDEN / "learner-report.txt", base / "learner-report.txt")
    return base


def project_copy(base: Path) -> Path:
    """A copy of the project (sources and docs) that a test may break."""
    proj = base / "project"
    shutil.copytree(ROOT, proj, ignore=IGNORED)
    (proj / "node_modules").symlink_to(ROOT / "node_modules")
    return proj


# ---- the command line ----


@pytest.mark.parametrize("command", [[], ["build"], ["serve"], ["check"]])
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


def test_dev_help_prints_the_header_only() -> None:
    done = subprocess.run([str(ROOT / "dev"), "--help"], capture_output=True, text=True,
                          timeout=30)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0].startswith("Project entry point")
    assert lines[-1].strip().startswith("./dev setup") and "set -" not in done.stdout


def test_a_failing_phase_still_gets_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    import build_site

    progress = build_site.Progress("build")
    with progress.phase("parse") as notes:
        notes.append("fine")
    with pytest.raises(ValueError), progress.phase("mkdocs"):
        raise ValueError("boom")
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\[build\] parse +\d+\.\d\ds  fine", lines[0]), lines
    assert re.fullmatch(r"\[build\] mkdocs    FAILED +\d+\.\d\ds", lines[1]), lines
    assert len(lines) == 2 and progress.current == "mkdocs"


# ---- a whole build ----


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """One site built from the fixture trace: (site folder, trace, build stdout)."""
    base = tmp_path_factory.mktemp("built")
    trace = fixture_dir(base / "in") / TRACE_NAME
    done = run(["build", "--trace", str(trace), "--out", str(base / "site")])
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "site", trace, done.stdout


@pytest.mark.slow
def test_the_three_pages_carry_traced_values(built: tuple[Path, Path, str]) -> None:
    site, _, _ = built
    for page in ("index.html", "trace.html", "building.html"):
        assert (site / page).is_file(), page
    index = (site / "index.html").read_text()
    assert re.search(r'<span class="tv" data-trace="FORWARD\.output" data-format="exact" '
                     r'title="FORWARD\.output = \[1\.0,-3\.25\]">\[1, \u22123\.25\]</span>', index)
    assert 'data-trace="STACK[4].residual"' in index
    assert index.count('class="residual-diagram"') >= 4
    assert 'data-trace="FORWARD.output"' in (site / "building.html").read_text()
    assert 'name="generator"' not in index


@pytest.mark.slow
def test_the_trace_page_shows_report_raw_trace_and_download(built: tuple[Path, Path, str]) -> None:
    site, trace, _ = built
    page = (site / "trace.html").read_text()
    assert 'href="trace/residual-connections-v1.trace"' in page
    assert (site / "trace" / TRACE_NAME).read_bytes() == trace.read_bytes()
    first_report_line = (GOLDEN / "learner-report.txt").read_text().splitlines()[0]
    assert first_report_line.split("=")[0] in page
    assert "TRACE residual-connections-v1 BEGIN" in page
    assert 'id="trace-grammar"' in page


@pytest.mark.slow
def test_one_progress_line_per_phase(built: tuple[Path, Path, str]) -> None:
    _, _, stdout = built
    lines = stdout.splitlines()
    assert [line.split()[1] for line in lines] == list(PHASES)
    for line in lines:
        assert re.match(r"^\[build\] \S+ +\d+\.\d\ds", line), line
    assert "skipped: --trace" in lines[0]
    assert re.search(r"\(cache (hit|miss)\)", lines[2])


@pytest.mark.slow
def test_without_a_report_the_trace_page_says_so(tmp_path: Path) -> None:
    trace = tmp_path / TRACE_NAME
    shutil.copy(GOLDEN / TRACE_NAME, trace)
    done = run(["build", "--trace", str(trace), "--out", str(tmp_path / "site")])
    assert done.returncode == 0, done.stderr
    assert "No learner report with this trace" in (tmp_path / "site" / "trace.html").read_text()


# ---- failures are atomic and one line ----


def previous_site(built: tuple[Path, Path, str], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "published"
    shutil.copytree(built[0], out)
    return out, tree_digest(out)


def assert_failed_cleanly(done: subprocess.CompletedProcess[str], out: Path,
                          before: dict[str, str], phase: str, project: Path = ROOT) -> str:
    """One error line on stderr, the failed phase named last on stdout, ``out`` untouched."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert re.fullmatch(rf"\[build\] {phase} +FAILED +\d+\.\d\ds",
                        done.stdout.splitlines()[-1]), done.stdout
    assert tree_digest(out) == before
    leftovers = [p.name for p in (*out.parent.iterdir(), *(project / "build").iterdir())
                 if p.name.startswith(f".{out.name}-")]
    assert leftovers == []
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda t: t.rsplit("TRACE", 1)[0], r"\d+: .*(END|footer|end)"),  # truncated
        (lambda t: t.replace("step=1e-06", "step=nan"), r"\d+: .*nan"),
        (lambda t: t.replace("CONFIG", "CONFIG-V2", 1), r"\d+: "),
        (lambda t: "", r"\d+: "),
    ],
    ids=["truncated", "nan", "unknown-record", "empty"],
)
def test_a_bad_trace_leaves_the_previous_site(built, tmp_path: Path, edit, where: str) -> None:
    out, before = previous_site(built, tmp_path)
    bad = tmp_path / TRACE_NAME
    bad.write_text(edit(built[1].read_text()))
    line = assert_failed_cleanly(run(["build", "--trace", str(bad), "--out", str(out)]),
                                 out, before, "parse")
    assert line.startswith(f"{bad}:") and re.search(where, line, re.IGNORECASE), line


@pytest.mark.slow
def test_missing_dot_is_one_clear_line(built, tmp_path: Path) -> None:
    out, before = previous_site(built, tmp_path)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    done = run(["build", "--trace", str(built[1]), "--out", str(out)], env={"PATH": str(empty)})
    line = assert_failed_cleanly(done, out, before, "generate")
    assert line.startswith("dot: Graphviz `dot` is not on PATH"), line


@pytest.mark.slow
def test_a_bad_trace_path_in_a_page_names_page_and_line(built, tmp_path: Path) -> None:
    out, before = previous_site(built, tmp_path)
    proj = project_copy(tmp_path)
    page = proj / "docs" / "building.md"
    text = page.read_text()
    page.write_text(text + '\nThe value {{ tv("FORWARD.no-such-key") }} is misspelt.\n')
    line_no = text.count("\n") + 2
    done = run(["build", "--trace", str(built[1]), "--out", str(out)], cwd=proj,
               script=proj / "build_site.py")
    line = assert_failed_cleanly(done, out, before, "mkdocs", proj)
    assert line.startswith(f"docs/building.md:{line_no}: "), line
    assert "FORWARD.no-such-key" in line


@pytest.mark.slow
def test_a_failing_gate_blocks_publishing(built, tmp_path: Path) -> None:
    out, before = previous_site(built, tmp_path)
    proj = project_copy(tmp_path)
    page = proj / "docs" / "building.md"
    page.write_text(page.read_text() + "\nA typed number, 0.42, has no provenance.\n")
    done = run(["build", "--trace", str(built[1]), "--out", str(out)], cwd=proj,
               script=proj / "build_site.py")
    line = assert_failed_cleanly(done, out, before, "gates", proj)
    assert line.startswith(f"{out}/building.html:") and "0.42" in line, line
    assert line.endswith("(from docs/building.md)"), line


@pytest.mark.slow
@pytest.mark.parametrize(
    ("html", "expected"),
    [('<a href="#no-such-heading">jump</a>', "no-such-heading"),
     ('<a href="trace.html#no-such-section">there</a>', "no-such-section"),
     ('<img src="missing.png" alt="gone">', "missing.png")],
    ids=["anchor", "anchor-on-other-page", "image"],
)
def test_a_broken_raw_html_link_fails_mkdocs(built, tmp_path: Path, html: str,
                                              expected: str) -> None:
    # Raw HTML escapes MkDocs' own Markdown link validation; the htmlproofer plugin must not.
    out, before = previous_site(built, tmp_path)
    proj = project_copy(tmp_path)
    page = proj / "docs" / "building.md"
    page.write_text(page.read_text() + f"\n<p>{html}</p>\n")
    done = run(["build", "--trace", str(built[1]), "--out", str(out)], cwd=proj,
               script=proj / "build_site.py")
    line = assert_failed_cleanly(done, out, before, "mkdocs", proj)
    last = page.read_text().count("\n")
    assert line.startswith(f"docs/building.md:{last}: broken link") and expected in line, line


@pytest.mark.slow
def test_check_reports_a_tampered_site(built, tmp_path: Path) -> None:
    assert run(["check", "--site", str(built[0]), "--trace", str(built[1])]).returncode == 0
    out, _ = previous_site(built, tmp_path)
    page = out / "building.html"
    page.write_text(page.read_text().replace("</article>", "<p>Typed: 0.42</p></article>", 1))
    done = run(["check", "--site", str(out), "--trace", str(built[1])])
    assert done.returncode == 1 and "0.42" in done.stdout and "Traceback" not in done.stderr


# ---- the README's main command, with the real engine ----


@pytest.mark.slow
def test_readme_build_runs_the_engine_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = subprocess.run([str(ROOT / "dev"), "build", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    engine_line = next(line for line in done.stdout.splitlines() if "] engine" in line)
    assert f"build/trace/{TRACE_NAME}" in engine_line
    trace = (ROOT / "build" / "trace" / TRACE_NAME).read_bytes()
    assert (out / "trace" / TRACE_NAME).read_bytes() == trace
    page = (out / "trace.html").read_text()
    assert "No learner report" not in page
    report = (ROOT / "build" / "trace" / "learner-report.txt").read_text()
    assert report.splitlines()[0].split("=")[0] in page
