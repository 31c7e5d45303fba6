"""sitebuild.tether: ``python -m sitebuild.tether PID MODULE ARGS`` runs the module as
``python -m MODULE ARGS`` would, and not at all when its parent is not PID. That the kernel
then kills it with a killed parent is shown on whole builds (tests/test_kill.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

from sitebuild.tether import tethered

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="PR_SET_PDEATHSIG is Linux's")

SHOW = """
import sys
print(__name__, sys.argv[0].endswith("shows.py"), sys.argv[1:])
sys.exit(3)
"""


def run(command: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "shows.py").write_text(SHOW)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)


def test_runs_the_module_as_main_with_its_arguments(tmp_path: Path) -> None:
    done = run(tethered("shows", ["trace", "-o", "x.trace"]), tmp_path)
    plain = run([sys.executable, "-m", "shows", "trace", "-o", "x.trace"], tmp_path)
    assert (done.returncode, done.stdout) == (plain.returncode, plain.stdout) == (
        3, "__main__ True ['trace', '-o', 'x.trace']\n"), done.stderr


def test_does_not_run_once_its_parent_is_gone(tmp_path: Path) -> None:
    # Started by this test, but told its parent is another process: as if that one had died
    # before the child could ask to die with it.
    other = os.getppid()
    command = tethered("shows", [])
    command[command.index(str(os.getpid()))] = str(other)
    done = run(command, tmp_path)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
