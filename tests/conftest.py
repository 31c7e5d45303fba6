"""Fixtures and checks shared by the whole suite.

Paths are constants in tests/paths.py (``ROOT``, ``GOLDEN_DIR``, ``GOLDEN_TRACE``,
``GOLDEN_REPORT``), imported by the tests themselves; this file is never imported.

- ``trace_text``: the golden trace (records/residual-connections-v2.trace) as text.
- ``trace``: ``trace_text`` parsed by ``tracefile.parse_trace``.
- ``golden_traces``: every recorded trace (records/*.trace), parsed, as a ``TraceSet``.
- ``hostile_name``: a parameter name full of quotes, ``<``, ``&``, braces, Markdown and math
  characters — all legal in a trace name.
- ``hostile_trace``: the golden trace with its parameter names replaced by ``hostile_name``.
- ``site_build`` (session): the one site built per session from the golden trace and the
  golden learner report, with ``--build-dir`` and ``--out`` in a pytest temp folder, as a
  ``site_support.BuiltSite`` (site, build folder, progress lines); ``built_site`` is its site
  folder. Tests must not modify either: ``site_copy`` is a copy a test may tamper with.
- ``engine_build`` (session): the README's command, ``./dev build``, run once with an empty
  build folder (so the engine runs) into a pytest temp folder.
- ``browser`` (session): headless Chromium (tests/browser_support.py).

The numerics are pinned first, before anything imports numpy (engine/numerics.py): the
experiments the tests run in process compute with the kernels ``python -m engine`` uses, and
the builds' engine runs inherit the same environment.

Checks: the run fails when the repository's own ``build/`` or ``site/`` changed during the
session (no test may write there), and collection fails when a test that uses a full build is
not marked ``slow`` or one that drives Chromium is not marked ``browser``.
"""

from __future__ import annotations

import pytest

from engine.errors import NumericsError
from engine.numerics import pin

try:
    pin()  # before every other import (pyproject.toml lets E402 pass here)
except NumericsError as error:
    raise SystemExit(f"pytest: error: {error}") from None

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import site_support
from browser_support import launch
from paths import GOLDEN_TRACE, OUTPUT_DIRS, RECORDS_DIR, ROOT, SITE_URL, SUB_PATH_URL
from site_support import (
    BUILD_TIMEOUT,
    BuiltSite,
    build,
    build_or_fail,
    folder_listing,
    listing_changes,
)

from sitebuild.engine_runs import CELL_CACHE
from sitebuild.paths import CHAPTER_TRACE
from tracefile import SCHEMAS, Trace, TraceSet, load_trace, parse_trace

HOSTILE_NAME = "\"'><script>alert(1)</script>&amp;{{x}}{%y%}\\*_$z$<!--"
#: Fixtures that run a whole build, and the one that starts Chromium.
FULL_BUILD_FIXTURES = frozenset({"site_build", "built_site", "engine_build"})
BROWSER_FIXTURE = "browser"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse to run a build test not marked ``slow`` or a Chromium test not marked ``browser``
    (so ``pytest -m "not slow and not browser"`` stays the fast loop); run the ``longest``
    first."""
    wrong = []
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if uses & FULL_BUILD_FIXTURES and item.get_closest_marker("slow") is None:
            wrong.append(f"{item.nodeid} uses a full build but is not marked slow")
        if BROWSER_FIXTURE in uses and item.get_closest_marker("browser") is None:
            wrong.append(f"{item.nodeid} drives Chromium but is not marked browser")
    if wrong:
        raise pytest.UsageError("markers missing:\n  " + "\n  ".join(wrong))
    # The longest tests first, so that with one pytest worker per core none of them starts
    # last and keeps the run waiting on one worker (the rest keep their order).
    items.sort(key=lambda item: item.get_closest_marker("longest") is None)


@pytest.fixture(scope="session", autouse=True)
def repository_outputs_untouched() -> Iterator[None]:
    """Fail the run when the repository's own build/ or site/ changed during the session."""
    before = {folder: folder_listing(folder) for folder in OUTPUT_DIRS}
    yield
    changes = []
    for folder in OUTPUT_DIRS:
        changes += [f"{folder.relative_to(ROOT)}/: {change}"
                    for change in listing_changes(before[folder], folder_listing(folder))]
    if changes:
        pytest.fail("tests wrote into the repository's own output folders (give every build "
                    "--build-dir and --out under a pytest temp folder):\n  "
                    + "\n  ".join(changes[:20]), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def shared_build_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One cache of engine runs for every build of the session (see site_support), and one
    cell cache of the training grids for every engine run, in process or not, so the suite
    trains each grid once (a cell cache already named in the environment is used as it is:
    its keys hold the code, so it cannot hand a test a stale cell)."""
    site_support.SHARED_CACHE["dir"] = tmp_path_factory.mktemp("shared-cache")
    ours = CELL_CACHE not in os.environ
    if ours:
        os.environ[CELL_CACHE] = str(tmp_path_factory.mktemp("cells"))
    yield
    site_support.SHARED_CACHE.clear()
    if ours:
        os.environ.pop(CELL_CACHE, None)


@pytest.fixture(scope="session")
def trace_text() -> str:
    return GOLDEN_TRACE.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def trace(trace_text: str) -> Trace:
    return parse_trace(trace_text, "golden.trace")


@pytest.fixture(scope="session")
def golden_traces() -> TraceSet:
    return TraceSet({trace_id: load_trace(RECORDS_DIR / schema.file_name, schema)
                     for trace_id, schema in SCHEMAS.items()}, CHAPTER_TRACE)


@pytest.fixture(scope="session")
def hostile_name() -> str:
    return HOSTILE_NAME


@pytest.fixture(scope="session")
def hostile_trace(trace_text: str) -> Trace:
    text = trace_text
    for name in ("residual.branch.weight", "residual.zero.weight", "plain.stack.0.branch.weight"):
        text = text.replace(name, HOSTILE_NAME)
    return parse_trace(text, "hostile.trace")


@pytest.fixture(scope="session")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The site built once per session from the golden trace and learner report."""
    base = tmp_path_factory.mktemp("golden-build")
    return build_or_fail(base / "site", base / "build", extra=("--site-url", SITE_URL))


@pytest.fixture(scope="session")
def sub_path_build(site_build: BuiltSite, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A second build, after the session's (so every figure comes from the shared cache), for
    an address under a sub-path, with Python's import log on stderr (-X importtime)."""
    base = tmp_path_factory.mktemp("sub-path-build")
    done = build(base / "site", base / "build", extra=("--site-url", SUB_PATH_URL),
                 env={"PYTHONPROFILEIMPORTTIME": "1"})
    if done.returncode != 0 or not (base / "site" / "index.html").is_file():
        pytest.fail(f"the sub-path build failed:\n{done.stdout}\n{done.stderr}", pytrace=False)
    return base / "site", done


@pytest.fixture(scope="session")
def built_site(site_build: BuiltSite) -> Path:
    """The session's site folder; tests must not modify it."""
    return site_build.site


@pytest.fixture(scope="session")
def drawn(site_build: BuiltSite) -> dict[str, str]:
    """The SVG figures the session's site was built with, by name: what a build hands its
    figures gate (``rendered``), so a test's gates compare with them rather than draw every
    chart again."""
    return {path.stem: path.read_text(encoding="utf-8")
            for path in (site_build.build_dir / "generated").glob("*.svg")}


@pytest.fixture
def site_copy(built_site: Path, tmp_path: Path) -> Path:
    """A copy of the session's site that the test may tamper with."""
    return Path(shutil.copytree(built_site, tmp_path / "site"))


@pytest.fixture(scope="session")
def engine_build(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """``./dev build`` (the README's command) with an empty build folder, once per session."""
    base = tmp_path_factory.mktemp("engine-build")
    out, build_dir = base / "site", base / "build"
    done = subprocess.run(
        [str(ROOT / "dev"), "build", "--build-dir", str(build_dir), "--out", str(out),
         "--site-url", SITE_URL],
        cwd=ROOT, capture_output=True, text=True, timeout=2 * BUILD_TIMEOUT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if done.returncode != 0 or not (out / "index.html").is_file():
        pytest.fail(f"./dev build failed (exit {done.returncode}):\n{done.stdout}\n"
                    f"{done.stderr}", pytrace=False)
    return BuiltSite(out, build_dir, done.stdout)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    with launch() as chromium:
        yield chromium
