"""What CI reruns of the records on every commit: what changed, and a sample of the rest.

Contract: `changed(base)` lists the traces whose recorded files and the grid cells whose
record lines differ between commit ``base`` and the working tree (``git diff``), and
`changed_notebooks(base)` the executed notebooks whose records do.
`default_base()` is ``$CI_BASE`` when set, else the parent of the oldest commit made within
``WINDOW_HOURS`` of ``HEAD`` (a session's commits; older ones were tested when they landed).
`rerun_cells(cells, budget)` trains recorded cells again and returns a ``FILE:LINE`` problem
for each whose result differs from its line or whose key is stale; with a ``budget`` in
seconds it stops starting new cells once that is spent. `sample(seed, leave_out)` is every
other recorded cell in an order drawn from ``seed`` (CI: ``HEAD``'s hash).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

import joblib

from engine import cell_records
from engine.cell_records import GRIDS, Recorded
from engine.code_key import ROOT
from engine.errors import EngineError
from engine.records import files_of
from tracefile.schemas import SCHEMAS

#: How far back from HEAD the commits CI tests by default reach: a session, three hours, ends
#: with CI; older commits were tested when they landed.
WINDOW_HOURS = 3
#: The longest wait between two progress lines of a rerun.
PROGRESS_SECONDS = 10.0
GIT_TIMEOUT = 60
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


@dataclass(frozen=True)
class CellRef:
    """One recorded cell: its grid and its record."""

    label: str
    record: Recorded


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise EngineError(f"record: git {' '.join(args)} failed: {error}") from None
    if done.returncode != 0:
        raise EngineError(f"record: git {' '.join(args)}: {done.stderr.strip()[:300]}")
    return done.stdout


def default_base() -> str:
    """The commit before the ones under test (see the module doc)."""
    if os.environ.get("CI_BASE"):
        return os.environ["CI_BASE"]
    head = int(_git("log", "-1", "--format=%ct", "HEAD").strip())
    recent = _git("log", "--format=%H", f"--since={head - WINDOW_HOURS * 3600}",
                  "HEAD").split()
    oldest = recent[-1] if recent else "HEAD"
    parents = _git("log", "-1", "--format=%P", oldest).split()
    # A history that starts inside the window: everything is under test.
    return parents[0] if parents else _git("hash-object", "-t", "tree", "/dev/null").strip()


def changed_notebooks(base: str) -> list[str]:
    """The executed notebooks whose records changed since ``base`` (names in ``records/``)."""
    names = _git("diff", "--name-only", base, "--", "records/notebooks").split()
    return [name.removeprefix("records/") for name in names
            if (ROOT / name).is_file()]  # a notebook taken away has nothing left to verify


def changed(base: str) -> tuple[list[str], list[CellRef]]:
    """The traces whose records changed since ``base``, and the cells whose lines did."""
    names = set(_git("diff", "--name-only", base, "--", "records").split())
    traces = [t for t in SCHEMAS if any(f"records/{name}" in names for name in files_of(t))]
    cells = []
    for label in dict.fromkeys(GRIDS):
        path = cell_records.file_of(label)
        rel = path.relative_to(ROOT).as_posix()
        if rel not in names or not path.is_file():
            continue
        lines = set()
        for start, count in HUNK.findall(_git("diff", "--unified=0", base, "--", rel)):
            lines.update(range(int(start), int(start) + int(count or 1)))
        cells += [CellRef(label, r) for r in cell_records.read(label).values() if r.line in lines]
    return traces, cells


def sample(seed: str, leave_out: Iterable[CellRef]) -> list[CellRef]:
    """Every recorded cell but ``leave_out``, in an order drawn from ``seed``."""
    skip = {(ref.label, ref.record.key) for ref in leave_out}
    every = [CellRef(label, r) for label in dict.fromkeys(GRIDS)
             for r in cell_records.read(label).values() if (label, r.key) not in skip]
    random.Random(seed).shuffle(every)
    return every


def head_hash() -> str:
    return _git("rev-parse", "HEAD").strip()


def rerun_cells(cells: Sequence[CellRef], progress: TextIO, budget: float | None = None
                ) -> tuple[int, list[str]]:
    """How many cells were rerun, and the problems found (see the module doc)."""
    from engine.experiments.grid import cell_keys, train_module
    from engine.numerics import current

    start, problems, jobs = time.perf_counter(), [], []
    for label in dict.fromkeys(ref.label for ref in cells):
        train = cell_records.trainer(label)
        mine = [ref for ref in cells if ref.label == label]
        built = [cell_records.rebuild(ref.record.cell, train_module(train)) for ref in mine]
        for ref, cell, key in zip(mine, built, cell_keys(built, train), strict=True):
            if key != ref.record.key:
                problems.append(f"{ref.record.where}: stale: the code that trains this cell "
                                "changed since it was recorded (./dev record)")
            else:
                jobs.append((ref, cell, train))
    order = {id(ref): number for number, ref in enumerate(cells)}
    jobs.sort(key=lambda job: order[id(job[0])])  # the order asked for, across grids
    numerics, done, said = repr(current()), 0, start
    run = joblib.Parallel(n_jobs=max(1, min(len(os.sched_getaffinity(0)), len(jobs))),
                          return_as="generator_unordered")
    results = run(joblib.delayed(_numbered)(number, ref.record.key, numerics, train, cell)
                  for number, (ref, cell, train) in enumerate(jobs))
    for number, result in results:
        ref, cell, _ = jobs[number]
        try:
            cell_records.check(ref.label, {ref.record.key: ref.record}, ref.record.key, cell,
                               result)
        except EngineError as error:
            problems.append(str(error))
        done += 1
        now = time.perf_counter()
        if now - said >= PROGRESS_SECONDS or done == len(jobs):
            print(f"record: {done}/{len(jobs)} cells rerun, {len(problems)} problem(s), "
                  f"{now - start:.0f} s elapsed", file=progress, flush=True)
            said = now
        if budget is not None and now - start > budget:
            with warnings.catch_warnings():  # joblib says it cancelled them: that is the point
                warnings.simplefilter("ignore", UserWarning)
                results.close()  # the cells not yet started are not run
            break
    return done, problems


def _numbered(number: int, *args: object) -> tuple[int, object]:
    from engine.experiments.grid import train_one

    return number, train_one(*args)  # type: ignore[arg-type]
