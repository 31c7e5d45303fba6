"""Build phases before MkDocs: engine → trace, trace → diagrams and tables, and gates.

Role: the logic behind ``build_site.py`` (which only orchestrates and reports).

Contract:
- ``run_engine(root, cache)`` runs ``python -m engine trace`` and ``python -m engine
  report`` as fresh subprocesses (the site never imports ``engine``) and returns
  ``({TRACE_NAME: bytes, REPORT_NAME: bytes}, cache_status)``; the result is cached
  under a key of the engine sources, the Python and the numpy version.
- ``generate(root, trace, target, cache)`` makes ``target`` hold exactly one
  ``<name>.svg`` per diagram, one ``<name>.html`` per table and a ``KEY`` stamp;
  the set is cached under a key of the trace text, the rendering modules of
  ``diagrams/`` (``RENDER_MODULES``) and its templates, ``dot -V`` and the numpy,
  jinja2 and markupsafe versions.
- ``run_gates(site_dir, trace)`` returns the gates' findings (empty = pass).
- ``source_date_epoch(root)`` is the last commit's time (or a fixed date).
- ``exclusive(build_dir)`` serialises processes that share one ``build/`` folder.
Failures raise ``BuildError`` (a ``SiteError``) whose ``str`` is one line.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from diagrams.cache import Cache, input_key, tree_parts, write_files
from diagrams.errors import BuildError
from diagrams.paths import REPORT_NAME, TRACE_NAME
from diagrams.trace import Trace

KEY_STAMP = "KEY"
# The rendering code, closed under its imports. The trace text stands for the engine (so
# engine sources are not hashed again); gates, hook, server and build command are left out
# so that editing them re-runs nothing here.
RENDER_MODULES = ("__init__.py", "dot*.py", "svg.py", "format.py", "tables.py", "trace*.py",
                  "errors.py")
RENDER_DISTRIBUTIONS = ("numpy", "jinja2", "markupsafe")
# The zip epoch (1980-01-01): a fixed build date when there is no commit to take one from.
FALLBACK_EPOCH = 315532800


@contextmanager
def exclusive(build_dir: Path) -> Iterator[None]:
    """Hold ``build_dir``'s lock: builds sharing one ``build/`` take turns, never interleave."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with (build_dir / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


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


def engine_key(root: Path) -> str:
    """Everything the engine's output depends on."""
    return input_key([("python", sys.version), ("numpy", dist_version("numpy")),
                      *tree_parts(root / "engine", root)])


def run_engine(root: Path, cache: Cache) -> tuple[dict[str, bytes], str]:
    """The trace and learner report from fresh engine processes (or the cache)."""

    def build() -> dict[str, bytes]:
        with tempfile.TemporaryDirectory(prefix="engine-") as tmp:
            out = Path(tmp) / TRACE_NAME
            commands = {"trace": ["trace", "-o", str(out)], "report": ["report"]}
            procs = {what: subprocess.Popen([sys.executable, "-m", "engine", *args], cwd=root,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for what, args in commands.items()}
            results = {what: (*proc.communicate(), proc.returncode)
                       for what, proc in procs.items()}
            for what, (_, err, code) in results.items():
                if code != 0:
                    raise BuildError("engine", f"`python -m engine {what}` exited with {code}: "
                                     f"{_last_line(err.decode('utf-8', 'replace'))}")
            if not out.is_file():
                raise BuildError("engine", f"`python -m engine trace -o` wrote no {TRACE_NAME}")
            return {TRACE_NAME: out.read_bytes(), REPORT_NAME: results["report"][0]}

    return cache.fetch_or_build("engine", engine_key(root), build)


def render_sources(root: Path) -> list[Path]:
    """The files of ``diagrams/`` that turn a trace into diagrams and tables, sorted."""
    folder = root / "diagrams"
    found = {p for pattern in RENDER_MODULES for p in folder.glob(pattern) if p.is_file()}
    return sorted(found)


def generated_key(root: Path, trace: Trace) -> str:
    """Exactly what the diagrams and tables depend on (see ``RENDER_MODULES``)."""
    return input_key([
        ("trace", trace.text), ("dot", dot_version()),
        *((f"version:{name}", dist_version(name)) for name in RENDER_DISTRIBUTIONS),
        *((p.relative_to(root).as_posix(), p.read_bytes()) for p in render_sources(root)),
        *tree_parts(root / "diagrams" / "templates", root),
    ])


def render_generated(trace: Trace) -> dict[str, bytes]:
    """Every diagram (SVG, via dot) and table (HTML) for ``trace``."""
    from diagrams.svg import DIAGRAMS, render_svg
    from diagrams.tables import TABLES, render_table

    def one_diagram(name: str) -> tuple[str, bytes]:
        dot_fn, title, desc = DIAGRAMS[name]
        return f"{name}.svg", render_svg(dot_fn(trace), name, title, desc).encode("utf-8")

    # dot runs as a subprocess per diagram, so threads overlap the waiting.
    with ThreadPoolExecutor(max_workers=4) as pool:
        files = dict(pool.map(one_diagram, sorted(DIAGRAMS)))
    for name in sorted(TABLES):
        files[f"{name}.html"] = str(render_table(name, trace)).encode("utf-8")
    return files


def generate(root: Path, trace: Trace, target: Path, cache: Cache) -> str:
    """Make ``target`` hold the generated files for ``trace``; return the cache status."""
    key = generated_key(root, trace)
    files, status = cache.fetch_or_build("generated", key, lambda: render_generated(trace))
    write_files(target, {**files, KEY_STAMP: key.encode("ascii")})
    return status


class GatesFailed(BuildError):
    """The gates found defects; ``str`` is the first finding's own line plus a count."""

    def __init__(self, findings: list[object]) -> None:
        more = len(findings) - 1
        suffix = f" (and {more} more finding{'s' if more > 1 else ''})" if more else ""
        super().__init__("gates", f"{findings[0]}{suffix}")
        self.findings = findings

    def __str__(self) -> str:
        return self.message


def run_gates(site_dir: Path, trace: Trace) -> list[object]:
    """The gates' findings on a built site (imported late: they load a lot)."""
    from diagrams.gates import run_gates as gates

    return list(gates(site_dir, trace))
