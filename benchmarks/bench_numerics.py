"""Hand-run measurement: each trace's bytes under every kernel this machine can be made to
run, with the engine's pinning and without it, and what the pinning costs the labs' cold run.

Run from the project root with the project's virtualenv (an x86-64 CPU with AVX2):

    .venv/bin/python benchmarks/bench_numerics.py [--traces ID ...] [--rounds N] [--jobs J]

1. Bytes. Every trace is written by ``python -m engine trace ID`` with each OpenBLAS core
   type forced by ``OPENBLAS_CORETYPE`` (unset: the machine's own choice) and each choice of
   numpy's loops (its own; up to X86_V3 by ``NPY_ENABLE_CPU_FEATURES``; baseline only, every
   dispatched level named in ``NPY_DISABLE_CPU_FEATURES``), once
   pinned (the engine's default) and once with ``ENGINE_NUMERICS=native``. The table gives
   the first twelve hex digits of each file's sha256, the kernel OpenBLAS actually ran (from
   the trace's NUMERICS record) and whether the bytes equal the golden file. Pinned, a row
   must show one digest per trace whatever was forced.
2. Cost. The two labs run in parallel as a cold build runs them (two engine processes), pinned
   and native (the machine's own kernels) alternately, ``--rounds`` times; it prints the
   median wall time of each and their ratio.
Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracefile import SCHEMAS, parse_trace  # noqa: E402
from tracefile.schemas.numerics import numerics_of  # noqa: E402

#: Every distinct x86-64 kernel set this numpy's OpenBLAS offers (others are aliases: Zen
#: runs Haswell's, Cooperlake and SapphireRapids SkylakeX's), and the machine's own choice.
CORES = ("", "Prescott", "Nehalem", "Sandybridge", "Haswell", "SkylakeX", "Zen")
#: numpy's dispatched levels, whether this CPU has them or not (numpy refuses other names).
DISPATCHED = subprocess.run(
    [sys.executable, "-c", "import numpy as np; s = np.show_config(mode='dicts')"
     "['SIMD Extensions']; print(*s.get('found', ()), *s.get('not found', ()))"],
    capture_output=True, text=True, check=True).stdout.strip()
LOOPS = {"own": {}, "X86_V3": {"NPY_ENABLE_CPU_FEATURES": "X86_V3"},
         "baseline": {"NPY_DISABLE_CPU_FEATURES": DISPATCHED}}
LABS = ("gradient-flow-v4", "residual-stream-v4")
#: The variables a caller might set, cleared so that each run sees only what it forces.
CLEARED = ("ENGINE_NUMERICS", "OPENBLAS_CORETYPE", "NPY_ENABLE_CPU_FEATURES",
           "NPY_DISABLE_CPU_FEATURES", "OPENBLAS_NUM_THREADS")


def environment(core: str, loops: dict[str, str], native: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env["PYTHONPATH"] = str(ROOT)
    if core:
        env["OPENBLAS_CORETYPE"] = core
    env.update(loops)
    if native:
        env["ENGINE_NUMERICS"] = "native"
    return env


def run(trace_id: str, env: dict[str, str], folder: Path) -> tuple[bytes, float]:
    """The trace's bytes and the wall time of ``python -m engine trace ID``."""
    out = folder / f"{trace_id}-{os.urandom(4).hex()}.trace"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "engine", "trace", trace_id, "-o", str(out)],
                   cwd=folder, env=env, check=True, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    data = out.read_bytes()
    out.unlink()
    return data, took


def kernel_of(trace_id: str, data: bytes) -> str:
    numerics = numerics_of(parse_trace(data.decode("utf-8"), "<run>", SCHEMAS[trace_id]))
    return "-" if numerics is None else numerics.kernel


def bytes_table(traces: list[str], jobs: int, folder: Path) -> None:
    cases = [(t, core, name, native) for t in traces for name in LOOPS for core in CORES
             for native in (False, True)]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(
            lambda c: run(c[0], environment(c[1], LOOPS[c[2]], c[3]), folder)[0], cases))
    found = dict(zip(cases, results, strict=True))
    print("| trace | numpy loops | OPENBLAS_CORETYPE | pinned | native (kernel run) |")
    print("| --- | --- | --- | --- | --- |")
    for trace_id in traces:
        golden = (ROOT / "tests" / "golden" / SCHEMAS[trace_id].file_name).read_bytes()
        for name in LOOPS:
            for core in CORES:
                cells = []
                for native in (False, True):
                    data = found[trace_id, core, name, native]
                    mark = " = golden" if data == golden else ""
                    ran = f" ({kernel_of(trace_id, data)})" if native else ""
                    cells.append(f"`{hashlib.sha256(data).hexdigest()[:12]}`{mark}{ran}")
                print(f"| {trace_id} | {name} | {core or '(unset)'} | {' | '.join(cells)} |")
        pinned = {found[trace_id, c, n, False] for c in CORES for n in LOOPS}
        native = {found[trace_id, c, n, True] for c in CORES for n in LOOPS}
        print(f"\n{trace_id}: {len(pinned)} distinct pinned, {len(native)} distinct native\n")


def cost(rounds: int, folder: Path) -> None:
    times: dict[str, list[float]] = {"pinned": [], "native": []}
    for _ in range(rounds):
        for mode in times:
            env = environment("", {}, native=mode == "native")
            start = time.perf_counter()
            with ThreadPoolExecutor(len(LABS)) as pool:
                list(pool.map(lambda t, e=env: run(t, e, folder), LABS))
            times[mode].append(time.perf_counter() - start)
    medians = {mode: statistics.median(values) for mode, values in times.items()}
    print("the labs' cold run (both engine jobs in parallel), median of "
          f"{rounds} interleaved rounds:")
    for mode, values in times.items():
        print(f"  {mode:6s} {medians[mode]:6.2f} s  (runs: "
              f"{', '.join(f'{v:.2f}' for v in values)})")
    print(f"  pinned / native: {medians['pinned'] / medians['native']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", default=list(SCHEMAS), choices=list(SCHEMAS),
                        help="which traces to write under every kernel (default: all)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds of the cost measurement (0: skip it)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="engine runs at once for the table (each on one BLAS thread)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-numerics-") as tmp:
        bytes_table(arguments.traces, arguments.jobs, Path(tmp))
        if arguments.rounds:
            cost(arguments.rounds, Path(tmp))


if __name__ == "__main__":
    main()
