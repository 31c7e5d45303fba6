"""The fast loop's parallel run (``./dev test --fast``: pytest-xdist, ``--dist loadgroup``)
keeps each ``xdist_group`` on one worker.

Tests that share an expensive run mark themselves with one group (the gradients lab's
experiment and trace modules share one run of the lab), so that a single worker runs it once.
The grouping is pytest-xdist's, and it broke once without a word: with pytest 9.2, xdist
3.8's loadgroup lost its groups and spread them like any other tests (pytest-xdist issue
#1386), and the lab ran on both workers. A nested session on made-up tests catches that.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

GROUPED = 8

TESTS = f"""
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("shared-run")


@pytest.mark.parametrize("n", range({GROUPED}))
def test_grouped(n):
    with Path(os.environ["WORKERS_SEEN"]).open("a") as seen:
        seen.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + "\\n")
"""


def workers_used(tmp_path: Path, dist: str) -> Counter[str]:
    """Which worker ran each grouped test, in a two-worker session with ``--dist dist``."""
    (tmp_path / "test_grouped.py").write_text(TESTS, encoding="utf-8")
    # Its own settings only: an empty ini file here (none found above it), and nothing of an
    # outer session's (options, worker ids, the path an outer worker set).
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PYTEST_") and name != "PYTHONPATH"}
    seen = tmp_path / f"seen-{dist}.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "--dist", dist, "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=tmp_path, env={**env, "WORKERS_SEEN": str(seen)}, capture_output=True,
        text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return Counter(seen.read_text(encoding="utf-8").split())


# Two nested sessions of two workers each (a few seconds): the full suite runs it, which is
# where a changed lock is tested.
@pytest.mark.slow
def test_loadgroup_runs_a_group_on_one_worker(tmp_path: Path) -> None:
    used = workers_used(tmp_path, "loadgroup")
    assert sum(used.values()) == GROUPED
    assert len(used) == 1, f"the group ran on {len(used)} workers: {dict(used)}"
    # The check can fail: plain load balancing spreads the same tests over both workers.
    assert len(workers_used(tmp_path, "load")) == 2
