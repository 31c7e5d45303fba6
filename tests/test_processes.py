"""sitebuild.processes: ``python -m sitebuild.processes PID MODULE ARGS`` runs ``python -m MODULE
ARGS``, ends when its parent is killed, and runs nothing when its parent is not PID. (Whole
builds killed in each phase: tests/test_kill.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import ROOT
from process_support import command, running

from sitebuild.processes import child_command

SHOW = """
import sys
print(__name__, sys.argv[0].endswith("shows.py"), sys.argv[1:])
sys.exit(3)
"""


def importing(tmp_path: Path) -> dict[str, str]:
    """The environment in which modules of ``tmp_path`` and of the project import."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}


def run(command: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "shows.py").write_text(SHOW)
    return subprocess.run(command, cwd=tmp_path, env=importing(tmp_path), capture_output=True,
                          text=True, timeout=60)


def test_runs_the_module_as_main_with_its_arguments(tmp_path: Path) -> None:
    done = run(child_command("shows", ["trace", "-o", "x.trace"]), tmp_path)
    plain = run([sys.executable, "-m", "shows", "trace", "-o", "x.trace"], tmp_path)
    assert (done.returncode, done.stdout) == (plain.returncode, plain.stdout) == (
        3, "__main__ True ['trace', '-o', 'x.trace']\n"), done.stderr


def test_does_not_run_once_its_parent_is_gone(tmp_path: Path) -> None:
    # Started by this test, but told its parent is another process: as if that one had died
    # before the child could ask to die with it.
    other = os.getppid()
    command = child_command("shows", [])
    command[command.index(str(os.getpid()))] = str(other)
    done = run(command, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")


# A parent that starts a child that dies with it and waits; the child says it runs (it runs only
# once the launcher watches its parent).
PARENT = """
import subprocess, sys, time
from sitebuild.processes import child_command
subprocess.Popen(child_command("waits", [sys.argv[1]]))
time.sleep(60)
"""
WAITS = """
import os, sys, time
with open(sys.argv[1] + ".part", "w") as handle:
    handle.write(str(os.getpid()))
os.replace(sys.argv[1] + ".part", sys.argv[1])
time.sleep(60)
"""


def test_dies_when_its_parent_is_killed_outright(tmp_path: Path) -> None:
    (tmp_path / "waits.py").write_text(WAITS)
    ready = tmp_path / "ready"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(ready)], cwd=tmp_path,
                              env=importing(tmp_path))
    child = None
    try:
        deadline = time.monotonic() + 30
        while not ready.is_file():
            assert parent.poll() is None and time.monotonic() < deadline, "the child never ran"
            time.sleep(0.01)
        child = int(ready.read_text())
        assert running(child) and b"waits" in command(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while running(child) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not running(child), "the child outlived its killed parent"
    finally:
        parent.kill()
        if child is not None and running(child):
            os.kill(child, signal.SIGKILL)


def test_a_child_reads_and_writes_utf8_under_the_c_locale(tmp_path: Path) -> None:
    (tmp_path / "reads.py").write_text(
        "import pathlib\nprint(pathlib.Path('page.md').read_text())\n")
    (tmp_path / "page.md").write_text("x ← x + F(x)\n", encoding="utf-8")
    done = subprocess.run(child_command("reads", []), cwd=tmp_path, capture_output=True,
                          env={**importing(tmp_path), "LC_ALL": "C", "LANG": "C",
                               "PYTHONUTF8": "0"}, timeout=60)
    assert (done.returncode, done.stdout.decode("utf-8")) == (0, "x ← x + F(x)\n\n"), done.stderr


def test_a_child_past_its_limit_is_ended_with_a_line() -> None:
    from sitebuild.errors import BuildError
    from sitebuild.processes import run_limited

    start = time.monotonic()
    with pytest.raises(BuildError, match=r"^mkdocs: took longer than 1 s and was stopped$"):
        run_limited([sys.executable, "-c", "import time; time.sleep(60)"], 1, "mkdocs")
    assert time.monotonic() - start < 10


def test_an_engine_run_past_its_limit_is_ended_with_a_line(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    from sitebuild import engine_runs
    from sitebuild.errors import BuildError

    monkeypatch.setattr(engine_runs, "ENGINE_SECONDS", 1)
    monkeypatch.setattr(engine_runs, "child_command", lambda module, args: [
        sys.executable, "-c", "import sys, time; print('working', file=sys.stderr); "
        "time.sleep(60)"])
    job = engine_runs.EngineJob("stuck", ("stuck.trace",), ("trace", "stuck"))
    start = time.monotonic()
    with pytest.raises(BuildError, match=r"^engine: `python -m engine trace stuck` took longer "
                                         r"than 1 s; stopped$"):
        engine_runs._run_job(ROOT, job, tmp_path, tmp_path / "cache", lambda line: None)
    assert time.monotonic() - start < 10
