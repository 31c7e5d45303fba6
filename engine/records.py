"""The recorded results: every trace the engine writes, committed in ``records/`` with the
key of what computed it, so nobody retrains a model to read a page.

Contract: ``records/keys.json`` maps each trace id to its key: `engine.code_key.code_key` of
its producer's module, ``engine.trace`` and (the chapter's) ``engine.report``, with the trace
id. ``records/FILE`` holds each output exactly as ``python -m engine trace`` writes it (the
chapter's learner report too), and ``records/cells/`` the training grids' cells
(`engine.cell_records`). `status` says of each trace whether its record is fresh (key and
files present) or why it is stale; `record` recomputes traces (cells from the cell cache)
and writes their records and their grids'; `recompute` runs them into a scratch folder, for
`verify` to compare with the records byte for byte. The labs' notebooks are recorded
executed (`engine.notebook_records`), each under its own key: `notebook_status`,
`record_notebooks` and `verify_notebooks` do for them what the three above do for traces,
after the traces, whose records a notebook checks its runs against.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine import notebook_records
from engine.code_key import ROOT, code_key
from engine.errors import EngineError
from tracefile.files import write_atomic
from tracefile.schemas import CHAPTER_TRACE, SCHEMAS

RECORDS = ROOT / "records"
KEYS = RECORDS / "keys.json"
REPORT_NAME = "learner-report.txt"
#: Where ``record`` keeps trained cells when ENGINE_CELL_CACHE names none (the build's).
DEFAULT_CELL_CACHE = ROOT / "build" / "cache" / "cells"
#: The longest a notebook's cell may run before its record fails.
NOTEBOOK_CELL_SECONDS = 900


@dataclass(frozen=True)
class Status:
    """One record, a trace's (by its id) or a notebook's (by its path in ``records/``):
    fresh, or stale and why."""

    trace_id: str
    key: str
    fresh: bool
    reason: str = ""


def files_of(trace_id: str) -> tuple[str, ...]:
    """The files trace ``trace_id``'s record holds."""
    name = SCHEMAS[trace_id].file_name
    return (name, REPORT_NAME) if trace_id == CHAPTER_TRACE else (name,)


def trace_key(trace_id: str) -> str:
    """What trace ``trace_id``'s bytes depend on (see the module doc)."""
    producer = SCHEMAS[trace_id].producer.partition(":")[0]
    report = ["engine.report"] if trace_id == CHAPTER_TRACE else []
    return code_key([producer, "engine.trace", *report], trace_id)


def recorded_keys(folder: Path = RECORDS) -> dict[str, str]:
    path = folder / KEYS.name
    if not path.is_file():
        return {}
    try:
        keys = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise EngineError(f"{path}: not JSON ({error})") from None
    if not isinstance(keys, dict):
        raise EngineError(f"{path}: expected an object of trace ids and keys")
    return {str(name): str(value) for name, value in keys.items()}


def status(trace_ids: Iterable[str] | None = None, folder: Path = RECORDS) -> list[Status]:
    """Each trace's record, fresh or stale (see the module doc)."""
    keys = recorded_keys(folder)
    found = []
    for trace_id in _known(trace_ids):
        key = trace_key(trace_id)
        reason = _stale(trace_id, key, keys, files_of(trace_id), folder,
                        "its code or the libraries changed since it was recorded")
        found.append(Status(trace_id, key, not reason, reason))
    return found


def notebook_status(folder: Path = RECORDS) -> list[Status]:
    """Each executed notebook's record, fresh or stale."""
    keys, found = recorded_keys(folder), []
    for source in notebook_records.sources():
        name = notebook_records.record_name(source)
        key = notebook_records.notebook_key(source, folder)
        reason = _stale(name, key, keys, (name,), folder, "its source, the code it runs or "
                        "its lab's trace changed since it was executed")
        found.append(Status(name, key, not reason, reason))
    return found


def _stale(name: str, key: str, keys: dict[str, str], files: Iterable[str], folder: Path,
           changed: str) -> str:
    """Why record ``name`` is stale ("" if fresh)."""
    missing = [file for file in files if not (folder / file).is_file()]
    if name not in keys:
        return "never recorded"
    if missing:
        return f"records/{missing[0]} is missing"
    return changed if keys[name] != key else ""


def _known(trace_ids: Iterable[str] | None) -> list[str]:
    wanted = list(SCHEMAS) if trace_ids is None else list(trace_ids)
    if unknown := [t for t in wanted if t not in SCHEMAS]:
        raise EngineError(f"record: no trace {unknown[0]!r}; the engine writes "
                          f"{', '.join(SCHEMAS)}")
    return wanted


def recompute(trace_id: str, progress: TextIO) -> dict[str, bytes]:
    """Trace ``trace_id``'s files from a fresh run of its producer (cells from the cache)."""
    from engine.report import render_report
    from engine.trace import experiment, trace_text

    start = time.perf_counter()
    print(f"record: computing {trace_id} …", file=progress, flush=True)
    results = experiment(trace_id)()
    files = {SCHEMAS[trace_id].file_name: trace_text(trace_id, results).encode()}
    if trace_id == CHAPTER_TRACE:
        files[REPORT_NAME] = render_report(results).encode()
    print(f"record: {trace_id} computed in {time.perf_counter() - start:.1f} s",
          file=progress, flush=True)
    return files


@contextlib.contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    """``os.environ`` with ``values`` set (None: unset), as it was again afterwards."""
    before = {name: os.environ.get(name) for name in values}
    try:
        _set(values)
        yield
    finally:
        _set(before)


def _set(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def record(trace_ids: Iterable[str], progress: TextIO, folder: Path = RECORDS) -> list[str]:
    """Recompute ``trace_ids`` and write their records and their grids' (names written)."""
    from engine.experiments.grid import CACHE_VARIABLE, RECORDS_VARIABLE

    cache = os.environ.get(CACHE_VARIABLE) or str(DEFAULT_CELL_CACHE)
    keys, written = recorded_keys(folder), []
    for trace_id in _known(trace_ids):
        with _environment(**{CACHE_VARIABLE: cache, RECORDS_VARIABLE: str(folder / "cells")}):
            files = recompute(trace_id, progress)
        keys[trace_id] = trace_key(trace_id)
        written += _write(folder, files, keys)
    return written


def record_notebooks(names: Iterable[str], progress: TextIO,
                     folder: Path = RECORDS) -> list[str]:
    """Execute the notebooks recorded as ``names`` (`notebook_status`'s ids) against the
    records as they stand, with the cell cache `record` uses, and write them (names written)."""
    from engine.experiments.grid import CACHE_VARIABLE, RECORDS_VARIABLE

    cache = os.environ.get(CACHE_VARIABLE) or str(DEFAULT_CELL_CACHE)
    keys, written = recorded_keys(folder), []
    for source in notebook_sources(names):
        name = notebook_records.record_name(source)
        with _environment(**{CACHE_VARIABLE: cache, RECORDS_VARIABLE: None}):
            data = _execute(source, progress)
        keys[name] = notebook_records.notebook_key(source, folder)
        written += _write(folder, {name: data}, keys)
    return written


def verify_notebooks(names: Iterable[str], progress: TextIO,
                     folder: Path = RECORDS) -> list[str]:
    """Execute the notebooks ``names`` from nothing (an empty cell cache) and list each whose
    record differs (``FILE:LINE: …``)."""
    from engine.experiments.grid import CACHE_VARIABLE, RECORDS_VARIABLE

    problems = []
    with tempfile.TemporaryDirectory(prefix="engine-verify-") as scratch, _environment(
            **{CACHE_VARIABLE: scratch, RECORDS_VARIABLE: None}):
        for source in notebook_sources(names):
            data = _execute(source, progress)
            problems.append(_differs(folder / notebook_records.record_name(source), data))
    return [problem for problem in problems if problem]


def notebook_sources(names: Iterable[str]) -> list[Path]:
    """The sources of the notebooks recorded as ``names``; one that does not exist is an
    `EngineError` naming those that do."""
    wanted, by_name = list(names), {notebook_records.record_name(source): source
                                    for source in notebook_records.sources()}
    if unknown := [name for name in wanted if name not in by_name]:
        raise EngineError(f"record: no notebook {unknown[0]!r}; there are "
                          f"{', '.join(by_name)}")
    return [by_name[name] for name in wanted]


def _execute(source: Path, progress: TextIO) -> bytes:
    start = time.perf_counter()
    print(f"record: executing notebooks/{source.name} …", file=progress, flush=True)
    data = notebook_records.execute(source, NOTEBOOK_CELL_SECONDS)
    print(f"record: notebooks/{source.name} executed in {time.perf_counter() - start:.1f} s",
          file=progress, flush=True)
    return data


def _write(folder: Path, files: dict[str, bytes], keys: dict[str, str]) -> list[str]:
    """Write ``files`` into ``folder``, then the keys (those of records that still exist)."""
    known = {*SCHEMAS, *(notebook_records.record_name(s) for s in notebook_records.sources())}
    try:
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(folder / name, data)
        write_atomic(folder / KEYS.name, json.dumps(
            {name: key for name, key in sorted(keys.items()) if name in known}, indent=1) + "\n")
    except OSError as error:
        raise EngineError(f"record: cannot write {folder}: "
                          f"{error.strerror or error}") from None
    return list(files)


def verify(trace_ids: Iterable[str], progress: TextIO, folder: Path = RECORDS) -> list[str]:
    """Recompute ``trace_ids`` from nothing (no cell cache) and list every recorded file,
    trace or grid, whose bytes differ (``FILE:LINE: …``); an empty list: all reproduced."""
    from engine.experiments.grid import CACHE_VARIABLE, RECORDS_VARIABLE

    problems = []
    with tempfile.TemporaryDirectory(prefix="engine-verify-") as scratch, _environment(
            **{CACHE_VARIABLE: None, RECORDS_VARIABLE: str(Path(scratch) / "cells")}):
        for trace_id in _known(trace_ids):
            fresh = recompute(trace_id, progress)
            problems += [_differs(folder / name, data) for name, data in fresh.items()]
        problems += [_differs(folder / "cells" / made.name, made.read_bytes())
                     for made in sorted((Path(scratch) / "cells").glob("*.jsonl"))]
    return [problem for problem in problems if problem]


def _differs(path: Path, data: bytes) -> str:
    """``FILE:LINE: …`` at the first line where ``path`` differs from ``data`` ("" if none)."""
    shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    if not path.is_file():
        return f"{shown}: not recorded (the rerun wrote it)"
    old, new = path.read_bytes().splitlines(), data.splitlines()
    if old == new:
        return ""
    line = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                min(len(old), len(new)))
    return (f"{shown}:{line + 1}: the record differs from a fresh run "
            f"(recorded {_cut(old, line)!r}, computed {_cut(new, line)!r})")


def _cut(lines: list[bytes], index: int) -> str:
    text = lines[index].decode("utf-8", "replace") if index < len(lines) else "<end of file>"
    return text if len(text) <= 120 else text[:117] + "..."
