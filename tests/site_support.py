"""Helpers for the tests that build the site: the command, project copies, tree hashes,
the one check of a failed build, and a local server.

Contract:
- `run(args, project)` runs `PROJECT/build_site.py ARGS` from `project` in a fresh process.
- `build(out, build_dir, ...)` runs `build_site.py build` with `--build-dir` and `--out`
  always given, so no test's build writes into the repository's own `build/` or `site/`; by
  default from the golden trace and the golden learner report (`traces=()`: run the engine).
  ``in_process=True`` runs it in the test's own process (no interpreter to start), on
  ``project`` (the code that runs is this checkout's: a copy whose Python was edited must
  build in its own process).
- `project_copy(base)` is a copy of the project (sources and docs) that a test may break.
- `Published.snapshot(out)` records a published site; `assert_failed_cleanly(done,
  previous_site, phase, build_dir)` is the one check of a failed build: exit 1, no traceback,
  one located line on stderr, the failed phase named last on stdout, the previous site
  byte-identical and nothing left behind.
- `published_traces(site, default)` parses every trace a built site published (`trace/`).
- `tree_digest(root)` hashes every file of a folder; `folder_listing(folder)` lists paths
  with sizes and mtimes (what the session's guard on `build/` and `site/` compares).
- `serve(directory)` serves a folder on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from paths import GOLDEN_REPORT, GOLDEN_TRACE, ROOT

from sitebuild.gates.rebuilt import site_files
from tracefile import SCHEMAS, TraceSet, load_trace

#: The first build of a session trains the labs' grids (about nine minutes on the reference
#: machine); the later ones read the session's cell cache.
BUILD_TIMEOUT = 1500
#: Left out of a project copy: outputs, caches, the virtualenv, the tests themselves.
IGNORED = shutil.ignore_patterns("build", "site", ".site-release-*", ".git", ".venv",
                                 "node_modules", "tests", "__pycache__", ".pytest_cache",
                                 ".ruff_cache", ".hypothesis", "*.egg-info")
#: A located error line: ``FILE:LINE: message``, ``FILE: message`` or ``PHASE: message``.
LOCATED = re.compile(r"^\S+(:\d+)?: \S")


@dataclass(frozen=True)
class BuiltSite:
    """A finished build: the published site, its build folder and what it printed."""

    site: Path
    build_dir: Path
    stdout: str


def run(args: Sequence[str], project: Path = ROOT, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    """``PROJECT/build_site.py ARGS`` in a fresh process, from ``project``."""
    return subprocess.run(
        [sys.executable, str(project / "build_site.py"), *args], cwd=project,
        capture_output=True, text=True, timeout=BUILD_TIMEOUT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
    )


#: A cache of engine runs and figures shared by the session's builds (set by conftest.py): a
#: build verifies every trace against the engine's own run, and the labs' runs take seconds.
#: Cache keys are content hashes, so a project copy with an edited engine still misses it.
SHARED_CACHE: dict[str, Path] = {}


def build(out: Path, build_dir: Path, *, traces: Sequence[Path] = (GOLDEN_TRACE,),
          report: Path | None = GOLDEN_REPORT, project: Path = ROOT,
          env: dict[str, str] | None = None, extra: Sequence[str] = (),
          shared_cache: bool = True, in_process: bool = False,
          ) -> subprocess.CompletedProcess[str]:
    """``build_site.py build`` into ``out`` with ``build_dir`` (both required)."""
    args = ["build", "--build-dir", str(build_dir), "--out", str(out)]
    if shared_cache and "dir" in SHARED_CACHE:
        args += ["--cache-dir", str(SHARED_CACHE["dir"])]
    for trace in traces:
        args += ["--trace", str(trace)]
    if report is not None:
        args += ["--report", str(report)]
    if in_process:
        return run_here([*args, *extra], project, env)
    return run([*args, *extra], project, env)


def run_here(args: Sequence[str], project: Path = ROOT, env: dict[str, str] | None = None,
             ) -> subprocess.CompletedProcess[str]:
    """``build_site.py ARGS`` on ``project`` in this process: its exit status and output."""
    import build_site

    stdout, stderr = io.StringIO(), io.StringIO()
    with (mock.patch.dict(os.environ, env or {}), contextlib.redirect_stdout(stdout),
          contextlib.redirect_stderr(stderr)):
        code = build_site.main(list(args), project)
    return subprocess.CompletedProcess(["build_site.py", *args], code, stdout.getvalue(),
                                       stderr.getvalue())


def build_or_fail(out: Path, build_dir: Path, **options: Any) -> BuiltSite:
    """``build(...)``; a failed build fails the calling test with its output."""
    done = build(out, build_dir, **options)
    if done.returncode != 0 or not (out / "index.html").is_file():
        pytest.fail(f"build_site.py build --out {out} failed (exit {done.returncode}):\n"
                    f"{done.stdout}\n{done.stderr}", pytrace=False)
    return BuiltSite(out, build_dir, done.stdout)


def project_copy(base: Path) -> Path:
    """A copy of the project (sources and docs) that a test may break."""
    proj = base / "project"
    shutil.copytree(ROOT, proj, ignore=IGNORED)
    (proj / "node_modules").symlink_to(ROOT / "node_modules")
    return proj


def published_traces(site: Path, default: str) -> TraceSet:
    """Every trace the site published (under trace/), ``default`` the one unqualified paths
    name."""
    return TraceSet({trace_id: load_trace(site / "trace" / schema.file_name, schema)
                     for trace_id, schema in SCHEMAS.items()}, default)


#: sha256 of every file under a folder, keyed by POSIX relative path.
tree_digest = site_files


def folder_listing(folder: Path) -> dict[str, tuple[int, int]] | None:
    """Every entry under ``folder`` (itself included) with its size and mtime; None if absent.

    Symbolic links are listed, not followed.
    """
    if not os.path.lexists(folder):
        return None
    listing = {}
    for top, dirs, files in os.walk(folder):
        for name in [".", *dirs, *files]:
            path = Path(top, name)
            stat = path.lstat()
            listing[path.relative_to(folder).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return listing


def listing_changes(before: dict[str, tuple[int, int]] | None,
                    after: dict[str, tuple[int, int]] | None) -> list[str]:
    """What differs between two ``folder_listing`` results, one line per path."""
    if before is None or after is None:
        return [] if before == after else ["created" if before is None else "removed"]
    return ([f"new: {p}" for p in sorted(after.keys() - before.keys())]
            + [f"gone: {p}" for p in sorted(before.keys() - after.keys())]
            + [f"changed: {p}" for p in sorted(before.keys() & after.keys())
               if before[p] != after[p]])


@dataclass(frozen=True)
class Published:
    """A previously published site that a failing build must leave exactly as it was."""

    path: Path
    digest: dict[str, str]
    beside: list[str]

    @classmethod
    def snapshot(cls, path: Path) -> Published:
        return cls(path, tree_digest(path), sorted(os.listdir(path.parent)))


def assert_failed_cleanly(done: subprocess.CompletedProcess[str], previous_site: Published,
                          phase: str, build_dir: Path) -> str:
    """The build failed the way every failure must; returns its one stderr line.

    Exit code 1, no traceback, exactly one located line on stderr (``FILE:LINE: ``,
    ``FILE: `` or ``PHASE: ``, under 1000 characters), ``[build] PHASE FAILED`` last on
    stdout, the previous site byte-identical, nothing new beside it and no temporary folder
    left in ``build_dir``.
    """
    shown = f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr[:2000]}"
    assert done.returncode == 1, shown
    assert "Traceback" not in done.stdout + done.stderr, shown
    lines = done.stderr.splitlines()
    assert len(lines) == 1, f"stderr must be one line, got {len(lines)}:\n{shown}"
    assert LOCATED.match(lines[0]), f"not a located line: {lines[0][:300]!r}"
    assert len(lines[0]) < 1000, f"error line is {len(lines[0])} characters long"
    last = done.stdout.splitlines()[-1] if done.stdout.strip() else ""
    assert re.fullmatch(rf"\[build\] {phase} +FAILED +\d+\.\d\ds", last), shown
    assert tree_digest(previous_site.path) == previous_site.digest, "previous site modified"
    assert sorted(os.listdir(previous_site.path.parent)) == previous_site.beside, (
        "the build left files beside the site")
    if build_dir.is_dir():
        # Not temporary: the lock, and the cache Zensical keeps beside its settings.
        leftovers = [p.name for p in build_dir.iterdir()
                     if p.name.startswith(".") and p.name not in (".lock", ".cache")]
        assert leftovers == [], f"temporary folders left in the build folder: {leftovers}"
    return lines[0]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (ephemeral port); yields the base URL ending in '/'."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
