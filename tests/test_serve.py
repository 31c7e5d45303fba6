"""Tests for `build_site.py serve` (sitebuild/serve.py): port checks and live rebuilds.

A bad or taken port must fail at once, before the site is built. While serving, an edit to
a page, a table template or an engine file must show up in what is served, re-running only
what depends on it (the cache status of each phase says which ran); a page edit is rebuilt in
the serving process unless code changed since it started.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from paths import GOLDEN_DIR, GOLDEN_REPORT, ROOT
from test_build_site import project_copy, run

import build_site
from sitebuild import pipeline
from sitebuild.errors import BuildError
from sitebuild.paths import REPORT_NAME
from sitebuild.publish import write_folder
from sitebuild.serve import check_port
from tracefile import SCHEMAS, TraceSet


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError("timed out")


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def phase_lines(log: Path, phase: str) -> list[str]:
    return [line for line in log.read_text().splitlines()
            if line.startswith(f"[build] {phase} ")]


def test_a_taken_port_fails_before_building() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BuildError) as caught:
            check_port("127.0.0.1", port)
        assert str(caught.value) == f"serve: port {port} is already in use (try --port N)"
        done = run(["serve", "--port", str(port)])
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"serve: port {port} is already in use (try --port N)\n"


def test_a_free_port_passes_the_probe_and_stays_free() -> None:
    port = free_port()
    check_port("127.0.0.1", port)
    with socket.socket() as again:  # the probe let go of it
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def lines_of(log: Path, prefix: str) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith(prefix)]


@pytest.mark.slow
def test_serve_rebuilds_after_page_template_and_engine_edits(tmp_path: Path) -> None:
    proj = project_copy(tmp_path)
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("w") as sink:
        server = subprocess.Popen(
            [sys.executable, str(proj / "build_site.py"), "serve", "--port", str(port)],
            cwd=proj, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: "How this site is built" in fetch(f"{base}/building.html"))
        assert f"<loc>{base}/index.html</loc>" in fetch(f"{base}/sitemap.xml")  # instant nav
        # The server remembers every page before the first edit (sitebuild.warm)...
        wait_for(lambda: lines_of(log, "[serve] pages remembered"))
        page = proj / "docs" / "building.md"
        page.write_text(page.read_text() + "\nA sentence added while serving.\n")
        wait_for(lambda: "A sentence added while serving." in fetch(f"{base}/building.html"))
        # A page edit is rebuilt inside the server: no engine run, no new process...
        assert len(phase_lines(log, "engine")) == 1
        assert any("(docs only, in process)" in line for line in lines_of(log, "[rebuild] total"))
        # ... and only the edited page is rendered again.
        pages = len(list((proj / "docs").rglob("*.md")))
        assert f"({pages - 1} of {pages} page renders reused)" in lines_of(
            log, "[rebuild] mkdocs")[0]
        template = proj / "diagrams" / "templates" / "stack.html.j2"
        text = template.read_text()
        assert "<caption>Plain and residual stacks" in text
        template.write_text(text.replace("<caption>Plain and residual stacks",
                                         "<caption>Plain and residual stacks, re-rendered", 1))
        wait_for(lambda: "Plain and residual stacks, re-rendered" in fetch(f"{base}/index.html"))
        # After a code edit even a page edit runs a fresh process: no stale module is used.
        page.write_text(page.read_text() + "\nA second sentence.\n")
        wait_for(lambda: "A second sentence." in fetch(f"{base}/building.html"))
        with (proj / "engine" / "__init__.py").open("a") as f:
            f.write("\n# an edit to the engine\n")
        wait_for(lambda: len(phase_lines(log, "engine")) >= 4)
        engine, generate = phase_lines(log, "engine"), phase_lines(log, "generate")
        # first build, template edit, page edit after code, engine edit: what each re-ran (an
        # edit of engine/__init__.py re-runs every experiment; nothing else re-runs one)
        everything = f"{len(SCHEMAS)} run, 0 cached"
        assert [everything in line for line in engine] == [True, False, False, True], engine
        assert all(" 0 run, " in line for line in engine[1:3]), engine
        assert ["(cache miss)" in line for line in generate[:2]] == [True, True]
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=30)


@pytest.mark.parametrize("config", ["mkdocs.yml", "broken"])
def test_warm_up_imports_what_a_rebuild_needs_and_leaves_errors_to_the_build(
        tmp_path: Path, config: str) -> None:
    root = ROOT
    if config == "broken":  # a broken config is the next build's to report, not the warm-up's
        root = tmp_path
        (tmp_path / "mkdocs.yml").write_text("site_name: [unclosed\n", encoding="utf-8")
    # A fresh interpreter: in this one, other tests have imported everything already.
    code = ("import json, sys; from pathlib import Path; from sitebuild.mkdocs_run import "
            "LATE_IMPORTS, warm_up; before = [n for n in LATE_IMPORTS if n in sys.modules]; "
            f"warm_up(Path({str(root)!r})); "
            "print(json.dumps([before, [n for n in LATE_IMPORTS if n not in sys.modules], "
            "'pymdownx.snippets' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, missing, extensions = json.loads(done.stdout)
    assert before == [] and missing == [], done.stdout
    # Loading the config imports its Markdown extensions; a broken config loads none.
    assert extensions == (config == "mkdocs.yml")


@pytest.mark.parametrize("stamp", ["another build's key", None])
def test_an_in_process_rebuild_never_shows_another_builds_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden_traces: TraceSet,
        stamp: str | None) -> None:
    # A build that failed in MkDocs stops before storing the figures it drew: the folder may
    # hold an older build's. The in-process rebuild brings it up to date first.
    build_dir = tmp_path / "build"
    (build_dir / "trace").mkdir(parents=True)
    for schema in SCHEMAS.values():
        shutil.copy(GOLDEN_DIR / schema.file_name, build_dir / "trace" / schema.file_name)
    shutil.copy(GOLDEN_REPORT, build_dir / "trace" / REPORT_NAME)
    folder = build_dir / "generated"
    args = build_site.parser().parse_args(["serve", "--build-dir", str(build_dir)])
    key = pipeline.generated_key(ROOT, golden_traces)
    write_folder(folder, {"old.svg": b"<svg/>", "KEY": (stamp or key).encode()})
    generated: list[Path] = []
    monkeypatch.setattr(pipeline, "generate", lambda root, traces, target, cache, k: (
        generated.append(target) or ("hit", {"new.svg": b"<svg/>"})))
    inputs = build_site.docs_inputs(args, None)
    if stamp is None:  # drawn from these traces: used as it is
        assert generated == [] and inputs.generated == {"old.svg": b"<svg/>"}
    else:
        assert generated == [folder] and inputs.generated == {"new.svg": b"<svg/>"}
