"""Hand-run benchmark: how long the pipeline's pieces take and how much memory they use.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_build.py [--repeat N]

It prints one line per measurement (median of N runs, and peak resident memory for the
subprocess builds). Nothing here is asserted: speed targets live in notes and docs, never in
timed tests. Builds use their own ``--build-dir`` in a temporary folder (the project's
``build/`` is left alone): a "cold" build starts from an empty one, a "warm" build reuses it.
"""

from __future__ import annotations

import argparse
import functools
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(func, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def child_peak_mib() -> float:
    # ru_maxrss is in KiB on Linux and covers the largest child waited for so far.
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def build(base: Path, cold: bool) -> None:
    if cold:
        shutil.rmtree(base / "build", ignore_errors=True)
    subprocess.run([sys.executable, "build_site.py", "build", "--out", str(base / "site"),
                    "--build-dir", str(base / "build")],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def many_records(text: str, count: int) -> str:
    """The chapter's trace with ``count`` SCALED records (keyed, increasing alphas)."""
    lines = text.splitlines(keepends=True)
    scaled = [i for i, line in enumerate(lines) if line.startswith("SCALED ")]
    extra = [f"SCALED alpha={2.0 + k / 1024!r} output=[2.0,-1.0]\n" for k in range(count)]
    return "".join(lines[: scaled[-1] + 1] + extra + lines[scaled[-1] + 1 :])


def build_big(base: Path, expect_ok: bool) -> None:
    """Build with ``base/big.trace`` given as an unverified trace, ``--force``d: after the
    first build the engine's run and the drawings come from the cache, MkDocs and the gates
    run each time. ``expect_ok``: it builds, else it is refused in one line."""
    done = subprocess.run([sys.executable, "build_site.py", "build", "--out", str(base / "site"),
                           "--build-dir", str(base / "build"), "--trace", str(base / "big.trace"),
                           "--unverified-trace", "--force"],
                          cwd=ROOT, capture_output=True, text=True)
    if (done.returncode == 0) != expect_ok:
        raise SystemExit(f"big trace: exit {done.returncode}\n{done.stdout}{done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    repeat = parser.parse_args().repeat

    from engine.trace import trace_text
    from tracefile import frame, parse_trace
    from tracefile.errors import TraceError

    text = trace_text()
    print(f"engine trace_text           {timed(trace_text, repeat):8.3f}s")
    print(f"parse_trace (valid)        {timed(lambda: parse_trace(text), repeat):8.4f}s")
    long_line = text.replace("PROOF ", "PROOF " + "x" * 10_000_000 + "=1 ", 1)

    def reject() -> None:
        try:
            parse_trace(long_line)
        except TraceError:
            return
        raise SystemExit("a 10 MB line was accepted")

    print(f"parse_trace (10 MB line)   {timed(reject, repeat):8.4f}s")
    big = many_records(text, 100_000)

    def refuse_big() -> None:
        try:
            parse_trace(big)
        except TraceError:
            return
        raise SystemExit(f"a trace of more than {frame.MAX_RECORDS} records was accepted")

    print(f"parse_trace (100,000 keyed records, {len(big) / 2**20:.1f} MiB, refused) "
          f"{timed(refuse_big, repeat):8.2f}s")
    # Without the record limit, to show the reader's cost stays linear.
    limit, frame.MAX_RECORDS = frame.MAX_RECORDS, 10**9
    trace = parse_trace(big)
    print(f"parse_trace (the same, the limit lifted) "
          f"{timed(lambda: parse_trace(big), repeat):8.2f}s")
    paths = trace.all_paths()
    print(f"resolve every path of it ({len(paths)} paths) "
          f"{timed(lambda: [trace.resolve(path) for path in paths], repeat):8.2f}s")
    frame.MAX_RECORDS = limit
    at_limit = many_records(text, limit - (len(text.splitlines()) - 2))
    for label, big_text, ok in (("100,000 records, refused", big, False),
                                (f"{limit:,} records, the limit", at_limit, True)):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            (base / "big.trace").write_text(big_text, encoding="utf-8")
            build_big(base, ok)  # the engine's run, cached for the timed builds
            print(f"build_site build --trace ({label}, unverified) "
                  f"{timed(functools.partial(build_big, base, ok), repeat):8.2f}s")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        print(f"build_site build (cold)    {timed(lambda: build(base, True), repeat):8.2f}s")
        print(f"build_site build (warm)    {timed(lambda: build(base, False), repeat):8.2f}s")
    print(f"peak RSS of a build        {child_peak_mib():8.1f} MiB")


if __name__ == "__main__":
    main()
