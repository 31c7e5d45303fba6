"""Hand-run benchmark: how long a newcomer waits for the first page of ``./dev serve``.

Run from the project root:

    python3 benchmarks/bench_first_page.py [--port N] [--timeout S]

It clones the committed project into a temporary folder (a fresh clone: no ``.venv``, no
``node_modules``, no ``build/``), runs the README's ``./dev serve`` there and times it until
the first page answers, printing every line the command printed with the second it arrived.
The floor, in the same run: ``./dev serve`` again in the same clone, now set up and with its
caches warm. Nothing here is asserted: timings belong here, never in a trace or on a page.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def first_page(clone: Path, port: int, timeout: float, label: str) -> float:
    """Seconds from starting ``./dev serve`` in ``clone`` to its first page."""
    start = time.perf_counter()
    serve = subprocess.Popen(["./dev", "serve", "--port", str(port)], cwd=clone,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)

    def echo() -> None:
        assert serve.stdout is not None
        for line in serve.stdout:
            if not line.startswith("WARNING: Location"):  # pip's notes on this machine's mirror
                print(f"  {label} {time.perf_counter() - start:7.1f}s | {line.rstrip()}",
                      flush=True)

    threading.Thread(target=echo, daemon=True).start()
    try:
        while time.perf_counter() - start < timeout:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                    if page.status == 200:
                        return time.perf_counter() - start
            except OSError:
                time.sleep(0.5)
        raise SystemExit(f"bench_first_page: no page after {timeout:.0f} s")
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timeout", type=float, default=1800.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="first-page-") as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
        cold = first_page(clone, options.port, options.timeout, "fresh")
        warm = first_page(clone, options.port, options.timeout, "again")
    print(f"fresh clone: first page after {cold:.1f} s; again, set up: {warm:.1f} s (floor)")


if __name__ == "__main__":
    sys.exit(main())
