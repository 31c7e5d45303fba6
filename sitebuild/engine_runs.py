"""The engine's results: each trace from its record in ``records/`` when that is fresh, else
from a ``python -m engine`` child process, cached.

Contract: ``run_engine(root, cache)`` returns one ``JobResult`` per job (``engine_jobs``). It
asks the engine which records are fresh (``python -m engine record --status``: the key of a
trace's code and numerics, which the site side never computes itself) and takes those files
from ``records/`` (status ``recorded``). A stale trace is recomputed, one job at a time so
the training grids have the cores to themselves, its lines of progress passed on as they
come (``said``), and cached in the build's cache under a key of its arguments, the Python and
numpy versions, the variables that choose the kernels and every file of ``engine/`` and
``tracefile/``. ``recorded=False`` (``check --fresh``) recomputes every trace. A failed run
is a ``BuildError`` at the crashing file and line.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sitebuild.cache import Cache, content_key, source_files
from sitebuild.errors import BuildError, last_line
from sitebuild.paths import CHAPTER_TRACE, REPORT_NAME, dist_version, temp_prefix
from sitebuild.processes import child_command
from tracefile import SCHEMAS, TraceSet
from tracefile.schemas.numerics import numerics_of

#: What an engine run reads of the project.
ENGINE_SOURCES = ("engine", "tracefile")
#: The folder of the recorded results (engine/records.py).
RECORDS = "records"
#: How long the engine may take to say which records are fresh (it reads, never runs).
STATUS_TIMEOUT = 120
#: The lines of an engine run's stderr kept for its error message.
TAIL_LINES = 200
#: How long one engine run may take: every lab cold takes about a quarter of an hour on two
#: busy cores; a run past this is stuck, not slow.
ENGINE_SECONDS = 3 * 3600
# What chooses the kernels of an engine run: its pinning mode, and the variables it sets when
# pinning or leaves to the caller when not (engine/numerics.py; tests/test_numerics.py keeps
# the two lists in step).
#: Where the engine keeps the cells of its training grids (engine/experiments/grid.py).
CELL_CACHE = "ENGINE_CELL_CACHE"
NUMERICS_ENVIRONMENT = ("ENGINE_NUMERICS", "OPENBLAS_CORETYPE", "NPY_ENABLE_CPU_FEATURES",
                        "NPY_DISABLE_CPU_FEATURES")


@dataclass(frozen=True)
class EngineJob:
    """One engine run: its name, the files it writes and the command-line arguments."""

    name: str
    files: tuple[str, ...]
    args: tuple[str, ...]


@dataclass(frozen=True)
class JobResult:
    job: EngineJob
    files: dict[str, bytes]
    status: str
    seconds: float


def engine_jobs() -> list[EngineJob]:
    """One job per declared trace; the chapter's also writes its learner report."""
    jobs = []
    for trace_id, schema in SCHEMAS.items():
        files, args = (schema.file_name,), ("trace", trace_id, "-o", schema.file_name)
        if trace_id == CHAPTER_TRACE:
            files, args = (*files, REPORT_NAME), (*args, "--report", REPORT_NAME)
        jobs.append(EngineJob(trace_id, files, args))
    return jobs


def job_key(root: Path, job: EngineJob) -> str:
    """Everything one engine job's output depends on."""
    return content_key([("python", sys.version), ("numpy", dist_version("numpy")),
                      ("args", " ".join(job.args)),
                      *((name, os.environ.get(name, "")) for name in NUMERICS_ENVIRONMENT),
                      *source_files(root, [root / name for name in ENGINE_SOURCES])])


def run_engine(root: Path, cache: Cache, workdir: Path,
               starting: Callable[[list[EngineJob], dict[str, str]], None] | None = None,
               said: Callable[[str], None] | None = None, recorded: bool = True
               ) -> list[JobResult]:
    """Every job's output, from its record, the cache or a fresh engine process (in
    ``workdir``); ``starting`` is told which jobs are about to run and why (before a long
    wait), ``said`` each line of progress a run prints."""
    jobs = engine_jobs()
    stale = record_status(root) if recorded else {job.name: "--fresh" for job in jobs}
    results: dict[str, JobResult] = {}
    for job in jobs:
        if job.name not in stale:
            files = {name: (root / RECORDS / name).read_bytes() for name in job.files}
            results[job.name] = JobResult(job, files, "recorded", 0.0)
    keys = {job.name: job_key(root, job) for job in jobs if job.name not in results}
    for job in jobs:
        if job.name in keys and (files := cache.lookup(f"engine-{job.name}",
                                                       keys[job.name])[0]) is not None:
            results[job.name] = JobResult(job, files, "cached", 0.0)
    todo = [job for job in jobs if job.name not in results]
    if todo and starting is not None:
        starting(todo, stale)
    for job in todo:
        result = _run_job(root, job, workdir, cache.root, said or (lambda line: None))
        cache.store(f"engine-{job.name}", keys[job.name], result.files)
        results[job.name] = result
    return [results[job.name] for job in jobs]


def record_status(root: Path) -> dict[str, str]:
    """The traces whose records are stale, with the engine's reason."""
    command = [sys.executable, "-m", "engine", "record", "--status"]
    try:
        done = subprocess.run(command, cwd=root, env=_engine_env(root), capture_output=True,
                              encoding="utf-8", errors="replace", timeout=STATUS_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BuildError("engine", f"`python -m engine record --status` took more than "
                         f"{STATUS_TIMEOUT} s") from None
    if done.returncode != 0:
        raise engine_failure(EngineJob("record", (), ("record", "--status")), done.returncode,
                             done.stderr)
    stale = {}
    for line in done.stdout.splitlines():
        name, state, *reason = line.split(" ", 2)
        if state != "fresh":
            stale[name] = " ".join(reason) or state
    return stale


def _run_job(root: Path, job: EngineJob, workdir: Path, cache: Path,
             said: Callable[[str], None]) -> JobResult:
    """One engine run in a scratch folder, its stderr passed on line by line."""
    workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=temp_prefix("engine"), dir=workdir) as tmp:
        started = time.perf_counter()
        tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        proc: subprocess.Popen[str] | None = None
        limit: threading.Timer | None = None
        # An interrupt may land anywhere in here, even while the timer's thread starts: the
        # finally stops whatever exists, and the timer is a daemon, so that a build that never
        # reached the finally does not wait hours for it at exit. (A run started before the
        # interrupt but never handed back ends with this process: it watches its parent.)
        try:
            proc = subprocess.Popen(child_command("engine", job.args), cwd=tmp,
                                    env=_engine_env(root, cache), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, encoding="utf-8", errors="replace")
            limit = threading.Timer(ENGINE_SECONDS, proc.kill)  # its lines may stop, not its run
            limit.daemon = True
            limit.start()
            assert proc.stderr is not None
            for line in proc.stderr:
                tail.append(line)
                said(line.rstrip("\n"))
            code = proc.wait()
        finally:
            if limit is not None:
                limit.cancel()
            # Interrupted or failed: no engine run outlives us (killed, the kernel ends them).
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        if time.perf_counter() - started >= ENGINE_SECONDS:
            raise BuildError("engine", f"`python -m engine {' '.join(job.args)}` took longer "
                             f"than {ENGINE_SECONDS:.0f} s; stopped")
        if code != 0:
            raise engine_failure(job, code, "".join(tail))
        missing = [name for name in job.files if not (Path(tmp) / name).is_file()]
        if missing:
            raise BuildError("engine", f"`python -m engine {' '.join(job.args)}` wrote "
                             f"no {missing[0]}")
        files = {name: (Path(tmp) / name).read_bytes() for name in job.files}
        return JobResult(job, files, "ran", time.perf_counter() - started)


TRACEBACK_FILE = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.M)


def engine_failure(job: EngineJob, code: int, stderr: str) -> BuildError:
    """The engine's own one-line error, or for a crash (a traceback, a syntax error) the file
    and line it happened at, with the exception's last line."""
    command = f"`python -m engine {' '.join(job.args)}` exited with {code}"
    where = TRACEBACK_FILE.findall(stderr)
    last = last_line(stderr)
    if not where:
        return BuildError("engine", f"{command}: {last}")
    file, line = where[-1]
    return BuildError(file, f"{command}: {last}", int(line))


def _engine_env(root: Path, cache: Path | None = None) -> dict[str, str]:
    """The engine runs from a scratch folder with the project root on its import path, and
    keeps the cells of its training grids in the build's ``cache`` (unless told another, a
    relative folder taken from where the build was started, not from the scratch folder)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    if env.get(CELL_CACHE):
        env[CELL_CACHE] = os.path.abspath(env[CELL_CACHE])
    elif cache is not None:
        env[CELL_CACHE] = str(cache / "cells")
    return env


def off_reference_note(traces: TraceSet) -> str | None:
    """One line naming each trace computed off the reference numerics, with its kernels (read
    from its NUMERICS record); None when every trace that records them ran on them."""
    off = [f"{trace.trace_id} ({numerics.kernel} BLAS kernels on {numerics.threads} "
           f"thread(s), numpy loops up to {numerics.simd[-1]})"
           for trace in traces
           if (numerics := numerics_of(trace)) is not None and not numerics.reference]
    if not off:
        return None
    return ("off the reference numerics: " + ", ".join(off) + " computed their numbers with "
            "other kernels, so they can differ from the published site's (docs/building.md)")
