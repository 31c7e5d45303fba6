"""The training grid (engine/experiments/grid.py): results in order whatever the map, each cell
cached on its own by joblib, a cached cell held to its record, a worker on other kernels
refused, workers that end with their run, and the same bytes from a local Dask cluster."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from paths import ROOT

from engine import cell_records, numerics
from engine.errors import EngineError
from engine.experiments import grid
from engine.experiments.gradient_flow.cells import StackCell, StackSetting, train_cell


@dataclass(frozen=True)
class Cell:
    arm: str
    seed: int


def square(cell: Cell) -> dict[str, np.ndarray]:
    """A stand-in for training: deterministic in the cell, and it counts its calls."""
    calls = Path(os.environ["GRID_TEST_CALLS"])
    with calls.open("a") as handle:
        handle.write(f"{cell.arm}:{cell.seed}\n")
    return {"value": np.array(cell.seed ** 2 + 0.5), "curve": np.arange(cell.seed, dtype=float)}


def where(cell: Cell) -> dict[str, np.ndarray]:
    """Which process ran the cell."""
    return {"pid": np.array(os.getpid())}


CELLS = [Cell(arm, seed) for arm in ("a", "b") for seed in (1, 2, 3)]
#: Real cells of the gradients lab, small enough to train in a moment.
TINY = StackSetting(width=4, hidden=8, samples=16, steps=6, points=3, teacher_gain=1.0,
                    activation="relu")
STACKS = [StackCell(TINY, variant, "default", 2, 0.01, seed)
          for variant in ("plain", "residual") for seed in (0, 1)]


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "calls.txt"
    path.touch()
    monkeypatch.setenv("GRID_TEST_CALLS", str(path))
    monkeypatch.delenv(grid.CACHE_VARIABLE, raising=False)
    monkeypatch.delenv(grid.RECORDS_VARIABLE, raising=False)
    monkeypatch.delenv(grid.DASK_VARIABLE, raising=False)
    # Counting calls needs this process's environment: joblib keeps its worker processes
    # between runs, with the environment they started with.
    monkeypatch.setenv(grid.WORKERS_VARIABLE, "1")
    return path


def test_results_come_in_the_cells_order_and_each_arm_reports_once(calls) -> None:
    said = io.StringIO()
    results = grid.run_grid(CELLS, square, said, "test grid")
    assert [float(r["value"]) for r in results] == [c.seed ** 2 + 0.5 for c in CELLS]
    assert len(calls.read_text().splitlines()) == len(CELLS)
    lines = said.getvalue().splitlines()
    assert sorted(line.split(" done")[0] for line in lines) == ["test grid: a", "test grid: b"]
    assert all("(3 seeds, 0 cached)" in line and "s elapsed" in line for line in lines)
    assert "/6 cells" in lines[0] and "s left" in lines[0], lines  # an estimate while unfinished


def test_worker_processes_give_the_same_bytes_as_one(calls, monkeypatch) -> None:
    serial = grid.run_grid(STACKS, train_cell)
    monkeypatch.setenv(grid.WORKERS_VARIABLE, "2")
    parallel = grid.run_grid(STACKS, train_cell)
    assert [cell_records.result_text(r) for r in parallel] == \
        [cell_records.result_text(r) for r in serial]


def test_a_bad_worker_count_is_one_line(calls, monkeypatch) -> None:
    monkeypatch.setenv(grid.WORKERS_VARIABLE, "two")
    with pytest.raises(EngineError, match="ENGINE_WORKERS must be a whole number, got 'two'"):
        grid.run_grid(CELLS, square)


def test_a_cell_cache_that_cannot_be_written_is_one_line(calls, tmp_path, monkeypatch) -> None:
    # Not a folder one can make (a file stands in its way: true even for root), then a cache
    # that fills up while cells train.
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "file" / "cells"))
    with pytest.raises(EngineError, match=r"^grid: the cell cache .*/file/cells "
                       r"\(ENGINE_CELL_CACHE\) cannot be written: Not a directory; name a "
                       "folder that can, or unset it"):
        grid.run_grid(CELLS, square)
    assert calls.read_text() == ""  # refused before any cell trained
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))

    def full(*args: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(grid, "_map", full)
    with pytest.raises(EngineError, match=r"could not be written: No space left on device$"):
        grid.run_grid(CELLS, square)


def test_cached_cells_are_not_run_again_and_give_the_same_bits(calls, tmp_path,
                                                                monkeypatch) -> None:
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    first = grid.run_grid(CELLS, square)
    said = io.StringIO()
    again = grid.run_grid(CELLS, square, said)
    assert len(calls.read_text().splitlines()) == len(CELLS)  # nothing ran the second time
    assert "(3 seeds, 3 cached)" in said.getvalue()
    assert [cell_records.result_text(r) for r in first] == \
        [cell_records.result_text(r) for r in again]


def test_one_changed_cell_runs_alone(calls, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    grid.run_grid(CELLS, square)
    grid.run_grid([*CELLS[:-1], Cell("b", 4)], square)
    assert calls.read_text().splitlines()[len(CELLS):] == ["b:4"]


def test_records_are_written_and_a_cached_cell_is_held_to_its_record(calls, tmp_path,
                                                                     monkeypatch) -> None:
    # Held on the reference kernels only (off them, a cell's bits differ from its record):
    # as if on them, wherever this runs.
    reference = dataclasses.replace(numerics.current(), machine="x86_64", blas="openblas-x",
                                    kernel="Haswell", threads=1, simd=("X86_V3",))
    monkeypatch.setattr(numerics, "current", lambda: reference)
    monkeypatch.setenv(grid.CACHE_VARIABLE, str(tmp_path / "cells"))
    monkeypatch.setenv(grid.RECORDS_VARIABLE, str(tmp_path / "records"))
    grid.run_grid(CELLS, square, label="test grid")
    path = tmp_path / "records" / "test-grid.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) == len(CELLS) and json.loads(lines[1])["cell"] == repr(CELLS[1])
    monkeypatch.delenv(grid.RECORDS_VARIABLE)
    monkeypatch.setattr(cell_records, "CELLS", tmp_path / "records")
    grid.run_grid(CELLS, square, label="test grid")  # the cache agrees with the record
    path.write_text(path.read_text().replace('"values": [4.5]', '"values": [4.5045]'))
    with pytest.raises(EngineError, match=r"test-grid.jsonl:2: grid test grid: cell "
                       r"Cell\(arm='a', seed=2\) gives value = .*4\.5\b.*record says.*4\.5045"):
        grid.run_grid(CELLS, square, label="test grid")


def test_a_worker_on_other_kernels_is_refused() -> None:
    with pytest.raises(EngineError, match="not the caller's"):
        grid.train_one("key", "Numerics(kernel='SkylakeX')", square, CELLS[0])


def test_the_key_follows_the_cell_and_the_code_the_cell_runs() -> None:
    keys = grid.cell_keys(STACKS, train_cell)
    assert len(set(keys)) == len(STACKS)
    again = grid.cell_keys([dataclasses.replace(STACKS[0])], train_cell)
    assert again == keys[:1]
    assert grid.train_module(train_cell) == "engine.experiments.gradient_flow.cells"


@pytest.mark.slow
def test_a_local_dask_cluster_gives_the_same_bytes(calls, monkeypatch) -> None:
    from distributed import Client, LocalCluster

    local = [cell_records.result_text(r) for r in grid.run_grid(STACKS, train_cell)]
    # Workers are new processes: they inherit this one's environment, so its pinned kernels.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        monkeypatch.setenv(grid.DASK_VARIABLE, cluster.scheduler_address)
        said = io.StringIO()
        remote = grid.run_grid(STACKS, train_cell, said, "dask grid")
        ran_in = {int(r["pid"]) for r in grid.run_grid(CELLS, where)}
        with Client(cluster) as client:
            workers = set(client.run(os.getpid).values())
    assert len(workers) == 2 and os.getpid() not in ran_in and ran_in <= workers, (ran_in,
                                                                                  workers)
    assert [cell_records.result_text(r) for r in remote] == local
    assert "4/4 cells" in said.getvalue()


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
    script = ("from engine.numerics import pin; pin(); from engine.experiments import grid; "
              "import slow_training as s; grid.run_grid([s.Cell('a', 1), s.Cell('a', 2)], s.slow)")
    env = {**os.environ, "GRID_TEST_PIDS": str(pids), grid.WORKERS_VARIABLE: "2",
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
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in workers), "a worker outlived its run"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
