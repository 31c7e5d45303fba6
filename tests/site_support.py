"""Helpers shared by the gate tests: the golden trace, whole-site builds, tree hashes, a server.

Contract: `golden_text()` is the engine's golden trace, so the site side can be built without
running the engine. `build(trace, out)` runs
`build_site.py build --trace TRACE --out OUT` in a fresh process and returns the completed
process. `built_site(tmp_path_factory)` builds one site per test session (cached here, so every
module's fixture shares it) and fails the test — never skips — when the build fails.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "residual-connections-v1.trace"
BUILD_TIMEOUT = 300

_built: dict[str, Path] = {}


def golden_text() -> str:
    """The golden trace the engine must reproduce byte for byte."""
    return GOLDEN.read_text(encoding="utf-8")


def build(trace: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Build the site from `trace` into `out` in a fresh Python process."""
    return subprocess.run(
        [sys.executable, "build_site.py", "build", "--trace", str(trace), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


def build_or_fail(trace: Path, out: Path) -> Path:
    """Build and return `out`; a failed build fails the calling test with its output."""
    done = build(trace, out)
    if done.returncode != 0 or not (out / "index.html").is_file():
        pytest.fail(
            f"build_site.py build --trace {trace} --out {out} failed "
            f"(exit {done.returncode}):\n{done.stdout}\n{done.stderr}",
            pytrace=False,
        )
    return out


def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One site built from the golden trace per session; tests must not modify it."""
    if "golden" not in _built:
        base = tmp_path_factory.mktemp("built")
        trace = base / "residual-connections-v1.trace"
        trace.write_text(golden_text(), encoding="utf-8")
        _built["golden"] = build_or_fail(trace, base / "site")
    return _built["golden"]


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under `root`, keyed by POSIX relative path."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


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
