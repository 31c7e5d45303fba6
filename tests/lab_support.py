"""One whole build of the site for the lab's tests, entirely in temporary folders.

Contract: `lab_site(tmp_path_factory)` runs `build_site.py build --build-dir B --out S` in a
fresh process (the engine runs every experiment, the gates run on the result), once per test
session, and returns S together with the build's progress output; a failed build fails the
calling test. `lab_traces(site)` parses the traces the site published.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracefile import SCHEMAS, TraceSet, load_trace

ROOT = Path(__file__).resolve().parents[1]
LAB_PAGE = "labs/gradient-flow.html"
LAB_TRACE = "gradient-flow-v1"
_built: dict[str, tuple[Path, str]] = {}


def lab_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The site built from a fresh run of the engine, and the build's output."""
    if "lab" not in _built:
        base = tmp_path_factory.mktemp("lab")
        site = base / "site"
        done = subprocess.run(
            [sys.executable, "build_site.py", "build", "--build-dir", str(base / "build"),
             "--out", str(site)],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        if done.returncode != 0 or not (site / LAB_PAGE).is_file():
            pytest.fail(f"build_site.py build failed (exit {done.returncode}):\n"
                        f"{done.stdout}\n{done.stderr}", pytrace=False)
        _built["lab"] = (site, done.stdout + done.stderr)
    return _built["lab"]


def lab_traces(site: Path) -> TraceSet:
    """Every trace the site published (under trace/), the lab's by default."""
    return TraceSet({trace_id: load_trace(site / "trace" / SCHEMAS[trace_id].file_name,
                                          SCHEMAS[trace_id]) for trace_id in SCHEMAS}, LAB_TRACE)
