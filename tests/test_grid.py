"""The training grid (engine/experiments/grid.py): parallel and serial runs agree, each cell
is cached on its own under a key of its settings and the engine's code, and a damaged entry
is trained again."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from paths import ROOT

from engine.experiments import grid


@dataclass(frozen=True)
class Cell:
    arm: str
    seed: int


def square(cell: Cell) -> dict[str, np.ndarray]:
    """A stand-in for training: deterministic in the cell, and it counts its calls."""
    calls = Path(grid.os.environ["GRID_TEST_CALLS"])
    with calls.open("a") as handle:
        handle.write(f"{cell.arm}:{cell.seed}\n")
    return {"value": np.array(cell.seed ** 2 + 0.5), "curve": np.arange(cell.seed, dtype=float)}


CELLS = [Cell(arm, seed) for arm in ("a", "b") for seed in (1, 2, 3)]


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "calls.txt"
    path.touch()
    monkeypatch.setenv("GRID_TEST_CALLS", str(path))
    return path


def test_results_come_in_the_cells_order_and_each_arm_reports_once(calls, monkeypatch) -> None:
    monkeypatch.delenv(grid.CACHE_VARIABLE, raising=False)
    said = io.StringIO()
    results = grid.run_grid(CELLS, square, [], said, "test grid")
    assert [float(r["value"]) for r in results] == [c.seed ** 2 + 0.5 for c in CELLS]
    assert len(calls.read_text().splitlines()) == len(CELLS)
    lines = said.getvalue().splitlines()
    assert sorted(line.split(",")[0] for line in lines) == ["test grid: a", "test grid: b"]
    assert all("3 seeds (0 cached" in line for line in lines)


def test_a_serial_run_gives_the_same_results(calls, monkeypatch) -> None:
    monkeypatch.delenv(grid.CACHE_VARIABLE, raising=False)
    parallel = grid.run_grid(CELLS, square, [])
    monkeypatch.setattr(grid.os, "sched_getaffinity", lambda pid: {0})
    serial = grid.run_grid(CELLS, square, [])
    for one, other in zip(parallel, serial, strict=True):
        assert one.keys() == other.keys()
        assert all(np.array_equal(one[k], other[k]) for k in one)


def test_cached_cells_are_not_run_again_and_give_the_same_bits(calls, tmp_path,
                                                                monkeypatch) -> None:
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    first = grid.run_grid(CELLS, square, [])
    said = io.StringIO()
    again = grid.run_grid(CELLS, square, [], said)
    assert len(calls.read_text().splitlines()) == len(CELLS)  # nothing ran the second time
    assert "3 seeds (3 cached" in said.getvalue()
    for one, other in zip(first, again, strict=True):
        assert all(np.array_equal(one[k], other[k]) for k in one)


def test_one_changed_cell_runs_alone(calls, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    grid.run_grid(CELLS, square, [])
    grid.run_grid([*CELLS[:-1], Cell("b", 4)], square, [])
    assert calls.read_text().splitlines()[len(CELLS):] == ["b:4"]


def test_editing_the_code_a_cell_runs_trains_it_again(calls, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    source = tmp_path / "training.py"
    source.write_text("STEPS = 1\n")
    grid.run_grid(CELLS[:1], square, [source])
    source.write_text("STEPS = 2\n")
    grid.run_grid(CELLS[:1], square, [source])
    assert len(calls.read_text().splitlines()) == 2


def test_a_damaged_entry_is_trained_again(calls, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "cells"
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(folder))
    grid.run_grid(CELLS[:1], square, [])
    (entry,) = folder.rglob("*.npz")
    entry.write_bytes(entry.read_bytes()[:40])
    (result,) = grid.run_grid(CELLS[:1], square, [])
    assert float(result["value"]) == 1.5
    assert len(calls.read_text().splitlines()) == 2


SLOW_TRAINING = '''
import os, time
from dataclasses import dataclass
from pathlib import Path

@dataclass(frozen=True)
class Cell:
    arm: str
    seed: int

def slow(cell):
    Path(os.environ["GRID_TEST_PIDS"], str(os.getpid())).touch()
    time.sleep(120)
'''


def test_workers_end_when_the_run_is_killed(tmp_path) -> None:
    (tmp_path / "slow_training.py").write_text(SLOW_TRAINING)
    pids = tmp_path / "pids"
    pids.mkdir()
    script = ("from engine.experiments import grid; import slow_training as s; "
              "grid.run_grid([s.Cell('a', 1), s.Cell('a', 2)], s.slow, [])")
    env = {**os.environ, "GRID_TEST_PIDS": str(pids),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop(grid.CACHE_VARIABLE, None)
    run = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [int(p.name) for p in pids.iterdir()]
        assert len(workers) == 2, "the workers did not start"
    finally:
        run.kill()
        run.wait()
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in workers), "a worker outlived its run"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_editing_a_comment_or_docstring_retrains_nothing(calls, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    source = tmp_path / "training.py"
    source.write_text('"""Steps."""\nSTEPS = 1\n')
    grid.run_grid(CELLS[:1], square, [source])
    source.write_text('"""How many steps, said again."""\nSTEPS = 1  # one\n')
    grid.run_grid(CELLS[:1], square, [source])
    assert len(calls.read_text().splitlines()) == 1
