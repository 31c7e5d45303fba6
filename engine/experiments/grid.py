"""A grid of training runs: one cell per setting and seed, trained on every core, each cell
cached on its own.

Contract: ``run_grid(cells, train, sources)`` returns ``train(cell)`` for every cell, in the
order given. ``train`` is a module-level function (or a partial of one) returning a mapping of
names to numpy arrays; cells run in spawned worker processes, one per usable core, which end
when this process does. With ``ENGINE_CELL_CACHE`` naming a folder, each result is kept there
under a key of the cell's ``repr``, the numpy version, the kernels (`engine.numerics.current`)
and the engine's code (everything under ``engine/`` but the experiments, plus ``sources``,
the experiment modules the cell runs, each as its syntax tree, so comments and docstrings
do not count): an edit that changes one cell re-runs that cell alone,
and a cached cell gives the same bits as a fresh run. Runs of one grid take turns (a lock),
so a second one reads what the first trained; the ``KEEP`` newest versions of the code keep
their cells. One progress line per arm (``cell.arm``).
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import io
import multiprocessing
import os
import shutil
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np

from tracefile.files import write_atomic

#: The folder of the cell cache (unset: no cache).
CACHE_VARIABLE = "ENGINE_CELL_CACHE"
ENGINE = Path(__file__).resolve().parent.parent
#: Engine code a training cell does not run: the experiments (a cell names its own modules).
NOT_TRAINING = ("experiments",)
#: How often a worker checks that its parent still runs.
PARENT_POLL_SECONDS = 0.5
#: Versions of the code whose cells the cache keeps.
KEEP = 2

Result = Mapping[str, np.ndarray]


class Cell(Protocol):
    """What the grid needs of a cell: a ``repr`` that names every setting, and its arm."""

    @property
    def arm(self) -> str: ...


def precision(results: Sequence[Result]) -> str:
    """The one floating-point format the cells trained in (each result's ``precision``)."""
    found = {str(result["precision"]) for result in results}
    if len(found) != 1:
        raise ValueError(f"grid: the cells must train in one precision, got {sorted(found)}")
    return found.pop()


def run_grid(cells: Sequence[Cell], train: Callable[[Any], Result], sources: Sequence[Path],
             progress: TextIO | None = None, label: str = "grid") -> list[dict[str, np.ndarray]]:
    """Every cell's result (see the module doc)."""
    salt = _code_key(sources)
    cache = _cache_folder(label, salt)
    keys = [hashlib.sha256(f"{salt}\n{cell!r}".encode()).hexdigest() for cell in cells]
    results: dict[int, dict[str, np.ndarray]] = {}
    with _training_lock(cache):  # a second run of the same grid waits, then reads the cells
        for index, key in enumerate(keys):
            if index not in results and cache is not None and (
                    found := _load(cache / f"{key}.npz")) is not None:
                results[index] = found
        todo = [index for index in range(len(cells)) if index not in results]
        report = _ArmReport(cells, progress, label, cached=set(results))
        for index, result in _train(cells, todo, train):
            results[index] = result
            if cache is not None:
                _store(cache / f"{keys[index]}.npz", result)
            report.done(index)
    return [results[index] for index in range(len(cells))]


@contextlib.contextmanager
def _training_lock(cache: Path | None) -> Iterator[None]:
    """This code version's cell folder, locked (nothing to lock without a cache)."""
    if cache is None:
        yield
        return
    with (cache / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _train(cells: Sequence[Cell], todo: list[int], train: Callable[[Any], Result]
           ) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """(index, result) of each cell in ``todo`` as it finishes. Workers are spawned, not
    forked: a fresh interpreter copies no lock another thread of this one might hold, and
    inherits the pinned kernels through the environment."""
    workers = min(len(os.sched_getaffinity(0)), len(todo))
    if workers < 2:
        for index in todo:
            yield index, dict(train(cells[index]))
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_end_with_parent, initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(train, cells[index]): index for index in todo}
        for future in as_completed(futures):
            yield futures[future], dict(future.result())


def _end_with_parent(parent: int) -> None:
    """In a worker: exit as soon as the process that started it is gone (killed, say), so no
    worker trains on for nobody."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


class _ArmReport:
    """Prints ``label: ARM, N seeds (K cached, S s elapsed)`` once every cell of an arm is
    done (at once for an arm found whole in the cache)."""

    def __init__(self, cells: Sequence[Cell], stream: TextIO | None, label: str,
                 cached: set[int]) -> None:
        self.stream, self.label, self.cached = stream, label, frozenset(cached)
        self.arm_of = [cell.arm for cell in cells]
        self.finished = set(cached)
        self.start = time.perf_counter()
        for arm in dict.fromkeys(self.arm_of):
            self._say_if_done(arm)

    def done(self, index: int) -> None:
        self.finished.add(index)
        self._say_if_done(self.arm_of[index])

    def _say_if_done(self, arm: str) -> None:
        cells = [i for i, name in enumerate(self.arm_of) if name == arm]
        if self.stream is None or not self.finished.issuperset(cells):
            return
        cached = len(self.cached.intersection(cells))
        print(f"{self.label}: {arm}, {len(cells)} seeds ({cached} cached, "
              f"{time.perf_counter() - self.start:.1f} s elapsed)", file=self.stream, flush=True)


def _cache_folder(label: str, salt: str) -> Path | None:
    """This grid's folder of the cell cache for this version of the code (made the newest of
    the grid's), or None (no cache); older versions of the same grid beyond ``KEEP`` go."""
    if not os.environ.get(CACHE_VARIABLE):
        return None
    root, grid = Path(os.environ[CACHE_VARIABLE]), "-".join(label.split())
    folder = root / f"{grid}-{salt[:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)
    versions = sorted((p for p in root.glob(f"{grid}-*") if p.is_dir()
                       and len(p.name) == len(folder.name)),
                      key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in versions[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def _code_key(sources: Sequence[Path]) -> str:
    """A hash of everything a training cell runs (see the module doc): each file as Python
    reads it (its syntax tree without docstrings), so editing a comment or a docstring of the
    engine retrains nothing."""
    from engine.numerics import current

    files = {path for path in ENGINE.rglob("*.py")
             if path.relative_to(ENGINE).parts[0] not in NOT_TRAINING}
    files.update(Path(source).resolve() for source in sources)
    digest = hashlib.sha256(f"{np.__version__}\n{current()!r}\n".encode())
    for path in sorted(files):
        inside = path.is_relative_to(ENGINE.parent)
        digest.update(f"{path.relative_to(ENGINE.parent) if inside else path}\n".encode())
        digest.update(_syntax(path).encode())
    return digest.hexdigest()


def _syntax(path: Path) -> str:
    """A module's syntax tree, docstrings dropped, as text (comments never reach the tree)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _load(path: Path) -> dict[str, np.ndarray] | None:
    """A cached cell, or None when there is none (or it cannot be read: then it re-runs)."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None


def _store(path: Path, result: Mapping[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **{name: np.asarray(value) for name, value in result.items()})
    write_atomic(path, buffer.getvalue())
