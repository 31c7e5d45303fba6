"""Build phases before MkDocs: engine → traces, traces → diagrams and tables, and gates.

Role: the logic behind ``build_site.py`` (which only orchestrates and reports).

Contract:
- ``engine_jobs(root)`` lists what the engine is run for: one job per declared trace
  (``python -m engine trace ID``) and the learner report. Each job is cached under its own key:
  the source closure of the modules it runs (read from their imports, so editing one experiment
  re-runs only that experiment), the Python and the numpy version, and the environment
  variables that choose the engine's kernels (``NUMERICS_ENVIRONMENT``).
- ``run_engine(root, cache, jobs)`` runs the jobs that miss the cache as parallel subprocesses
  (the site never imports ``engine``) and returns one ``JobResult`` per job: its file, bytes,
  cache status and time.
- ``generate(root, traces, target, cache)`` makes ``target`` hold exactly one ``<name>.svg``
  per diagram and chart, one ``<name>.html`` per table and a ``KEY`` stamp; the set is cached
  under a key of the traces they draw, the drawing code (``tracefile/`` and ``diagrams/``),
  ``dot -V`` and the numpy, jinja2, markupsafe and matplotlib versions. ``generating(...)`` is
  the same as a context: on a miss it yields while the charts are still being drawn (a build
  runs MkDocs meanwhile), and stores the files only when ``finish()`` has them all.
- ``off_reference_note(traces)`` is one line naming each trace whose NUMERICS record says it
  was computed off the reference numerics, or None.
- ``run_gates(site_dir, traces)`` returns the gates' findings (empty = pass).
- ``source_date_epoch(root)`` is the last commit's time (or a fixed date).
- ``exclusive(build_dir)`` serialises processes that share one ``build/`` folder.
Failures raise ``BuildError`` (a ``LocatedError``) whose ``str`` is one line.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sitebuild.cache import Cache, input_key, tree_parts
from sitebuild.closure import source_closure
from sitebuild.drawing import Drawing
from sitebuild.drawing import start as start_drawing
from sitebuild.errors import BuildError
from sitebuild.paths import CHAPTER_TRACE, REPORT_NAME, TEMPORARY, temp_prefix
from sitebuild.publish import write_folder
from sitebuild.tether import tethered
from tracefile import SCHEMAS, TraceSet
from tracefile.schemas.numerics import numerics_of

KEY_STAMP = "KEY"
# The drawing code and the trace contract it reads. The trace text stands for the engine (so
# engine sources are not hashed again); the build package (gates, hook, server) is left out so
# that editing it re-runs nothing here.
RENDER_PACKAGES = ("tracefile", "diagrams")
RENDER_DISTRIBUTIONS = ("numpy", "jinja2", "markupsafe", "matplotlib")
# The modules every engine run goes through, besides the experiment's own.
ENGINE_ENTRY = ("engine.__main__", "engine.trace")
# What chooses the kernels of an engine run: its pinning mode, and the variables it sets when
# pinning or leaves to the caller when not (engine/numerics.py; tests/test_numerics.py keeps
# the two lists in step).
NUMERICS_ENVIRONMENT = ("ENGINE_NUMERICS", "OPENBLAS_CORETYPE", "NPY_ENABLE_CPU_FEATURES",
                        "NPY_DISABLE_CPU_FEATURES")
# The zip epoch (1980-01-01): a fixed build date when there is no commit to take one from.
FALLBACK_EPOCH = 315532800


@dataclass(frozen=True)
class EngineJob:
    """One engine run: its name, the files it writes and the command-line arguments."""

    name: str
    files: tuple[str, ...]
    args: tuple[str, ...]
    modules: tuple[str, ...]


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
        modules = (schema.producer_module, *ENGINE_ENTRY)
        if trace_id == CHAPTER_TRACE:
            files, args = (*files, REPORT_NAME), (*args, "--report", REPORT_NAME)
            modules = (*modules, "engine.report")
        jobs.append(EngineJob(trace_id, files, args, modules))
    return jobs


@contextmanager
def exclusive(build_dir: Path, say: Callable[[str], None] = print) -> Iterator[None]:
    """Hold ``build_dir``'s lock: builds sharing one ``build/`` take turns, never interleave.

    A build that has to wait says so, naming the process that holds the lock (its pid is
    written into the lock file); once it holds the lock it removes what dead builds left.
    """
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
        handle = (build_dir / ".lock").open("a+")
    except OSError as err:
        raise BuildError(str(build_dir), f"cannot use the build folder: "
                         f"{err.strerror or err}") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            say(f"[build] waiting for the build in progress (pid {holder}) that holds "
                f"{build_dir / '.lock'}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        remove_leftovers(build_dir, build_dir / "cache")
        yield


def remove_leftovers(*folders: Path) -> list[str]:
    """Remove the temporary folders of builds that are no longer running from ``folders``
    (never a live build's: a killed build leaves them, the next one clears them)."""
    removed = []
    for folder in folders:
        for path in sorted(folder.iterdir()) if folder.is_dir() else ():
            found = TEMPORARY.fullmatch(path.name)
            if found is None or not path.is_dir():
                continue
            pid = int(found.group(1))
            if pid != os.getpid() and _alive(pid):
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def source_date_epoch(root: Path) -> str:
    """SOURCE_DATE_EPOCH as set, else the last commit's time, else a fixed date."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        return os.environ["SOURCE_DATE_EPOCH"]
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=root,
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return str(FALLBACK_EPOCH)
    stamp = out.stdout.strip()
    return stamp if out.returncode == 0 and stamp.isdigit() else str(FALLBACK_EPOCH)


def dist_version(name: str) -> str:
    """Installed version of a distribution, without importing it."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def dot_version() -> str:
    """``dot -V`` output; a clear one-line error when Graphviz is missing."""
    try:
        out = subprocess.run(["dot", "-V"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise BuildError("dot", "Graphviz `dot` is not on PATH; install Graphviz "
                         "(Debian: apt-get install graphviz)") from None
    except (OSError, subprocess.TimeoutExpired) as err:
        raise BuildError("dot", f"`dot -V` failed: {err}") from None
    if out.returncode != 0:
        raise BuildError("dot", f"`dot -V` exited with {out.returncode}: {_last_line(out.stderr)}")
    return (out.stderr + out.stdout).strip()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def job_key(root: Path, job: EngineJob) -> str:
    """Everything one engine job's output depends on."""
    files = source_closure(root, job.modules)
    return input_key([("python", sys.version), ("numpy", dist_version("numpy")),
                      ("args", " ".join(job.args)),
                      *((name, os.environ.get(name, "")) for name in NUMERICS_ENVIRONMENT),
                      *((p.relative_to(root).as_posix(), p.read_bytes()) for p in files)])


def engine_key(root: Path) -> str:
    """One key over every engine job (what `build` compares to decide "up to date")."""
    return input_key([(job.name, job_key(root, job)) for job in engine_jobs()])


def run_engine(root: Path, cache: Cache, jobs: list[EngineJob] | None = None,
               workdir: Path | None = None,
               starting: Callable[[list[EngineJob]], None] | None = None) -> list[JobResult]:
    """Every job's output, from the cache or from fresh engine processes run in parallel;
    ``starting`` is told which jobs are about to run (a progress line before a long wait)."""
    jobs = engine_jobs() if jobs is None else jobs
    keys = {job.name: job_key(root, job) for job in jobs}
    results: dict[str, JobResult] = {}
    for job in jobs:
        files, _ = cache.lookup(f"engine-{job.name}", keys[job.name])
        if files is not None:
            results[job.name] = JobResult(job, files, "cached", 0.0)
    todo = [job for job in jobs if job.name not in results]
    if todo and starting is not None:
        starting(todo)
    if todo:
        workdir = workdir or cache.root.parent
        for result in _run_jobs(root, todo, workdir):
            cache.store(f"engine-{result.job.name}", keys[result.job.name], result.files)
            results[result.job.name] = result
    return [results[job.name] for job in jobs]


def _run_jobs(root: Path, jobs: list[EngineJob], workdir: Path) -> list[JobResult]:
    import tempfile

    workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=temp_prefix("engine"), dir=workdir) as tmp:
        started = {job.name: time.perf_counter() for job in jobs}
        procs = {job.name: subprocess.Popen(
            tethered("engine", job.args), cwd=tmp, env=_engine_env(root),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for job in jobs}
        try:
            return _collect(jobs, procs, started, Path(tmp))
        finally:
            # Interrupted or failed: no engine run outlives us (killed, the kernel ends them).
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


def _collect(jobs: list[EngineJob], procs: dict[str, subprocess.Popen[bytes]],
             started: dict[str, float], tmp: Path) -> list[JobResult]:
    done: list[JobResult] = []
    for job in jobs:
        _, err = procs[job.name].communicate()
        took = time.perf_counter() - started[job.name]
        code = procs[job.name].returncode
        if code != 0:
            raise engine_failure(job, code, err.decode("utf-8", "replace"))
        missing = [name for name in job.files if not (Path(tmp) / name).is_file()]
        if missing:
            raise BuildError("engine", f"`python -m engine {' '.join(job.args)}` wrote "
                             f"no {missing[0]}")
        files = {name: (Path(tmp) / name).read_bytes() for name in job.files}
        done.append(JobResult(job, files, "ran", took))
    return done


TRACEBACK_FILE = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.M)


def engine_failure(job: EngineJob, code: int, stderr: str) -> BuildError:
    """The engine's own one-line error, or for a crash (a traceback, a syntax error) the file
    and line it happened at, with the exception's last line."""
    command = f"`python -m engine {' '.join(job.args)}` exited with {code}"
    where = TRACEBACK_FILE.findall(stderr)
    if not where:
        return BuildError("engine", f"{command}: {_last_line(stderr)}")
    file, line = where[-1]
    return BuildError(file, f"{command}: {_last_line(stderr)}", int(line))


def _engine_env(root: Path) -> dict[str, str]:
    """The engine runs from a scratch folder; the project root goes on its import path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
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


def render_sources(root: Path) -> list[Path]:
    """The modules that turn a trace into diagrams and tables, sorted."""
    return sorted(p for package in RENDER_PACKAGES for p in (root / package).rglob("*.py"))


def generated_key(root: Path, traces: TraceSet) -> str:
    """Exactly what the diagrams and tables depend on (see ``RENDER_PACKAGES``)."""
    return input_key([
        *((f"trace:{trace.trace_id}", trace.text) for trace in traces), ("dot", dot_version()),
        *((f"version:{name}", dist_version(name)) for name in RENDER_DISTRIBUTIONS),
        *((p.relative_to(root).as_posix(), p.read_bytes()) for p in render_sources(root)),
        *tree_parts(root / "diagrams" / "templates", root),
    ])


class Generation:
    """The generated files of one build: taken from the cache, or being drawn (``drawing``:
    the hook reads the charts from it as pages need them, while MkDocs runs)."""

    def __init__(self, status: str, files: dict[str, bytes] | None,
                 drawing: Drawing | None, store: Callable[[dict[str, bytes]], None]) -> None:
        self.status = status
        self.drawing = drawing
        self._files = files
        self._store = store

    def finish(self) -> dict[str, bytes]:
        """Every file, once drawn; the first call stores a drawing's files in the cache and
        the target folder."""
        if self._files is None:
            assert self.drawing is not None
            self._files = self.drawing.files()
            self._store(self._files)
        return self._files


@contextmanager
def generating(root: Path, traces: TraceSet, target: Path, cache: Cache,
               key: str | None = None) -> Iterator[Generation]:
    """The generated files for ``traces``: from the cache (``target`` then holds them at
    once), or drawn, charts in worker processes while the caller goes on; ``finish()`` waits
    for them and only then fills the cache and ``target``, so a failed drawing stores nothing.
    On leaving, unfinished charts are abandoned. ``key``: ``generated_key(root, traces)``."""
    key = key or generated_key(root, traces)

    def store(files: dict[str, bytes]) -> None:
        cache.store("generated", key, files)
        write_folder(target, {**files, KEY_STAMP: key.encode("ascii")})

    cached, status = cache.lookup("generated", key)
    if cached is not None:
        write_folder(target, {**cached, KEY_STAMP: key.encode("ascii")})
        yield Generation(status, cached, None, store)
        return
    with start_drawing(traces) as drawn:
        yield Generation(status, None, drawn, store)


def generate(root: Path, traces: TraceSet, target: Path, cache: Cache, key: str | None = None
             ) -> tuple[str, dict[str, bytes]]:
    """Make ``target`` hold the generated files for ``traces``; return the cache status and
    the files. ``key``: ``generated_key(root, traces)`` if the caller has it already."""
    with generating(root, traces, target, cache, key) as generation:
        return generation.status, generation.finish()


def generated_on_disk(folder: Path, key: str) -> dict[str, bytes] | None:
    """The files ``generate`` left in ``folder`` if they were made under ``key``, else None
    (the figure gate then renders the diagrams again rather than trust another build's)."""
    try:
        if (folder / KEY_STAMP).read_bytes() != key.encode("ascii"):
            return None
        return {path.name: path.read_bytes() for path in sorted(folder.iterdir())
                if path.is_file() and path.name != KEY_STAMP}
    except OSError:
        return None


class GatesFailed(BuildError):
    """The gates found defects; ``str`` is the first finding's own line plus a count and the
    file that lists them all (``report``: written by the caller)."""

    def __init__(self, findings: list[object], report: Path | None = None) -> None:
        more = len(findings) - 1
        suffix = f" (and {more} more finding{'s' if more > 1 else ''}" if more else ""
        if more and report is not None:
            suffix += f", all listed in {report}"
        super().__init__("gates", f"{findings[0]}{suffix}{')' if more else ''}")
        self.findings = findings

    def __str__(self) -> str:
        return self.message


def run_gates(site_dir: Path, traces: TraceSet, generated: dict[str, bytes] | None = None,
              site_url: str | None = None, memo: dict[Any, Any] | None = None) -> list[object]:
    """The gates' findings on a built site (imported late: they load a lot). ``generated``:
    the diagrams this build rendered from ``traces``, which the figure check then reuses;
    ``memo``: a long-lived process's per-page findings (``sitebuild.warm``)."""
    from sitebuild.gates import run_gates as gates

    rendered = {name[: -len(".svg")]: data.decode("utf-8")
                for name, data in (generated or {}).items() if name.endswith(".svg")}
    return list(gates(site_dir, traces, rendered=rendered, base=served_path(site_url),
                      memo=memo))


def served_path(site_url: str | None) -> str:
    """The path a site is served under, ending in "/" as MkDocs makes ``site_url`` end: with
    ``https://host/sub`` a link to ``/subway/`` is outside the site, not inside it."""
    return urlsplit(site_url).path.rstrip("/") + "/" if site_url else "/"
