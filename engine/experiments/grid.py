"""A grid of training runs: one cell per setting and seed, each run once per version of the
code that trains it, on this machine's cores or on a Dask cluster.

Contract: ``run_grid(cells, train, progress, label)`` returns ``train(cell)`` for every cell,
in the order given. ``train`` is a module-level function (or a partial of one whose
arguments the module's code determines) returning a mapping of names to numpy arrays. A
cell's key is `engine.code_key.code_key` of ``train``'s module (its own import closure and
the libraries) with the cell's ``repr``, which names every setting.

- Cache: with ``ENGINE_CELL_CACHE`` naming a folder, results are kept there by joblib's
  ``Memory`` under their key and the kernels that computed them; a cell found there is not
  trained again.
- Map: joblib's ``Parallel``, in local processes (``ENGINE_WORKERS`` of them, default one per
  usable core); with ``ENGINE_DASK_SCHEDULER=ADDRESS`` the cells go to that Dask scheduler
  instead, through joblib's Dask backend. Every worker checks it computes with the caller's
  kernels, so a cell never comes back from a machine whose numerics differ.
- Records: on the reference kernels, a cell whose line is in the grid's record
  (`engine.cell_records`) must match it when it comes from the cache; with
  ``ENGINE_CELL_RECORDS`` naming a folder, the grid's record there is rewritten from this run.
- Progress: one line per finished arm (``cell.arm``), and one at least every
  ``HEARTBEAT_SECONDS`` while cells finish, with the cells done, the time elapsed and an
  estimate of what remains.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import joblib
import numpy as np

from engine import cell_records
from engine.code_key import code_key
from engine.errors import EngineError

#: The folder of the local cell cache (unset: no cache).
CACHE_VARIABLE = "ENGINE_CELL_CACHE"
#: The folder whose grid records this run rewrites (set by ``python -m engine record``).
RECORDS_VARIABLE = "ENGINE_CELL_RECORDS"
#: A Dask scheduler's address: cells are trained on its workers.
DASK_VARIABLE = "ENGINE_DASK_SCHEDULER"
#: How many local worker processes (default: one per usable core).
WORKERS_VARIABLE = "ENGINE_WORKERS"
#: How often a local worker checks that its caller still runs.
PARENT_POLL_SECONDS = 0.5
#: The longest wait between two progress lines while cells finish (arms can be slow).
HEARTBEAT_SECONDS = 20.0

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


def train_module(train: Callable[[Any], Result]) -> str:
    """The module whose code ``train`` (or the function a partial wraps) runs."""
    return getattr(train, "func", train).__module__


def cell_keys(cells: Sequence[Cell], train: Callable[[Any], Result]) -> list[str]:
    """Each cell's key (see the module doc)."""
    salt = code_key([train_module(train)])
    return [hashlib.sha256(f"{salt}\n{cell!r}".encode()).hexdigest() for cell in cells]


def _cache_key(key: str, numerics: str) -> str:
    """Where this machine keeps a cell: its key and the kernels that computed it."""
    return hashlib.sha256(f"{key}\n{numerics}".encode()).hexdigest()


def run_grid(cells: Sequence[Cell], train: Callable[[Any], Result],
             progress: TextIO | None = None, label: str = "grid") -> list[dict[str, np.ndarray]]:
    """Every cell's result (see the module doc)."""
    from engine.numerics import current

    keys, numerics = cell_keys(cells, train), current()
    stored = [_cache_key(key, repr(numerics)) for key in keys]
    folder = _cache_folder()
    memory = joblib.Memory(folder, verbose=0)
    trained = memory.cache(train_one, ignore=["numerics", "train", "cell", "parent"])
    cached = {i for i, key in enumerate(stored) if _in_cache(trained, key)}
    report = _Report(cells, progress, label, cached)
    results: dict[int, dict[str, np.ndarray]] = {}
    try:
        for index, result in _map(trained, repr(numerics), train, cells, stored, cached):
            results[index] = result
            report.done(index)
    except OSError as error:  # the cache filled up, or was taken away, while cells trained
        raise EngineError(f"grid: the cell cache {folder} ({CACHE_VARIABLE}) could not be "
                          f"written: {error.strerror or error}") from None
    ordered = [results[index] for index in range(len(cells))]
    recorded = cell_records.read(label) if numerics.reference else {}
    for index in cached:  # a cached cell must be what was recorded for its key
        cell_records.check(label, recorded, keys[index], cells[index], ordered[index])
    if os.environ.get(RECORDS_VARIABLE):
        cell_records.write(Path(os.environ[RECORDS_VARIABLE]), label, cells, keys, ordered)
    return ordered


def _cache_folder() -> str | None:
    """The cell cache's folder (``CACHE_VARIABLE``; None: no cache), made if need be and
    shown writable before any cell trains: a folder that cannot hold a cell is one line."""
    folder = os.environ.get(CACHE_VARIABLE) or None
    if folder is not None:
        try:
            os.makedirs(folder, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as error:
            raise EngineError(f"grid: the cell cache {folder} ({CACHE_VARIABLE}) cannot be "
                              f"written: {error.strerror or error}; name a folder that can, "
                              "or unset it to train without one") from None
    return folder


def _in_cache(trained: Any, key: str) -> bool:
    check = getattr(trained, "check_call_in_cache", None)  # None: no cache
    return bool(check and check(key, None, None, None))


def _map(trained: Callable[..., dict[str, np.ndarray]], numerics: str,
         train: Callable[[Any], Result], cells: Sequence[Cell], keys: Sequence[str],
         cached: set[int]) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """(index, result) of every cell as it finishes: the cached ones first, in process."""
    for index in sorted(cached):
        yield index, trained(keys[index], numerics, train, cells[index])
    todo = [index for index in range(len(cells)) if index not in cached]
    if not todo:
        return
    with _backend(len(todo)) as (jobs, local):
        run = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
        parent = os.getpid() if local else None
        yield from run(joblib.delayed(_indexed)(trained, index, keys[index], numerics, train,
                                                cells[index], parent) for index in todo)


@contextlib.contextmanager
def _backend(cells: int) -> Iterator[tuple[int, bool]]:
    """The number of jobs, and whether they run in local processes (else on Dask:
    ``ENGINE_DASK_SCHEDULER``)."""
    address = os.environ.get(DASK_VARIABLE)
    if not address:
        wanted = os.environ.get(WORKERS_VARIABLE) or len(os.sched_getaffinity(0))
        try:
            workers = int(wanted)
        except ValueError:
            raise EngineError(f"grid: {WORKERS_VARIABLE} must be a whole number, got "
                              f"{wanted!r}") from None
        yield max(1, min(workers, cells)), True
        return
    from distributed import Client

    with Client(address, timeout=30) as client, joblib.parallel_config(backend="dask"):
        yield max(1, min(sum(client.nthreads().values()), cells)), False


def _indexed(trained: Callable[..., dict[str, np.ndarray]], index: int, *args: Any
             ) -> tuple[int, dict[str, np.ndarray]]:
    return index, trained(*args)


def train_one(key: str, numerics: str, train: Callable[[Any], Result], cell: Cell,
              parent: int | None = None) -> dict[str, np.ndarray]:
    """One cell's result, computed where this runs, if it runs the caller's kernels. In a
    local worker process (``parent``: the caller's pid), the worker ends with its caller."""
    from engine.numerics import current

    if parent is not None and parent != os.getpid():
        _end_with(parent)
    if repr(current()) != numerics:
        raise EngineError(f"grid: a worker computes with {current()!r}, not the caller's "
                          f"{numerics}; its cells would differ (pin the worker's numerics)")
    return {name: np.asarray(value) for name, value in train(cell).items()}


_WATCHING: list[int] = []


def _end_with(parent: int) -> None:
    """Exit this worker as soon as ``parent`` is gone (killed, say), so no worker trains on
    for nobody (joblib's workers otherwise finish the cell they hold)."""
    if _WATCHING:
        return
    _WATCHING.append(parent)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


class _Report:
    """Prints ``label: ARM done (N seeds, K cached) · D/T cells · E s elapsed, about R s
    left`` once every cell of an arm is done, and ``label: D/T cells · …`` when a cell
    finishes ``HEARTBEAT_SECONDS`` after the last line."""

    def __init__(self, cells: Sequence[Cell], stream: TextIO | None, label: str,
                 cached: set[int]) -> None:
        self.stream, self.label, self.cached = stream, label, frozenset(cached)
        self.arm_of = [cell.arm for cell in cells]
        self.finished: set[int] = set()
        self.start = self.said = time.perf_counter()
        self.trained = 0

    def done(self, index: int) -> None:
        self.finished.add(index)
        self.trained += index not in self.cached
        arm = self.arm_of[index]
        cells = [i for i, name in enumerate(self.arm_of) if name == arm]
        now = time.perf_counter()
        if self.stream is None:
            return
        if self.finished.issuperset(cells):
            cached = len(self.cached.intersection(cells))
            self._say(f"{arm} done ({len(cells)} seeds, {cached} cached) · ", now)
        elif now - self.said >= HEARTBEAT_SECONDS:  # slow arms: a line every so often
            self._say("", now)

    def _say(self, what: str, now: float) -> None:
        elapsed, left = now - self.start, len(self.arm_of) - len(self.finished)
        estimate = f", about {elapsed / self.trained * left:.0f} s left" if (
            self.trained and left) else ""
        print(f"{self.label}: {what}{len(self.finished)}/{len(self.arm_of)} cells · "
              f"{elapsed:.1f} s elapsed{estimate}", file=self.stream, flush=True)
        self.said = now
