"""Hand-run benchmark: the engine's training throughput and its per-op overhead over numpy.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_engine.py [--repeat N] [--steps S]

It runs with the malloc settings its environment holds, and says which: ``./dev`` and the
engine export them (engine/allocator.py). To measure what they are worth, run it once with
them exported and once under ``env -u MALLOC_MMAP_THRESHOLD_ -u MALLOC_TRIM_THRESHOLD_``.

Two measurements, nothing asserted (speed is watched and written down, never timed in a test):

1. Training steps per second of the decoder lab's model (residual, pre-norm, d = 32, 4 heads,
   MLP 4d, batch 16 sequences of 30 tokens from the arithmetic corpus, Adam with clipping) at
   depths 2, 4 and 8. One step is: draw a batch, zero the gradients, forward, loss, backward,
   Adam update. Each repeat times ``S`` steps per depth, depths interleaved.
2. Per-op overhead: forward plus backward of ``matmul``, ``add`` and ``gelu`` on ``[32, 32]``
   operands through the engine, against the same forward and backward written as bare numpy
   expressions, and against a floor (calling a function that does nothing) measured in the
   same loop. Cases are interleaved within each repeat; every figure is a median over repeats.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.allocator import MALLOC_ENVIRONMENT  # noqa: E402
from engine.numerics import pin  # noqa: E402

pin()  # the kernels and the one BLAS thread of every engine run, before numpy loads
#: The malloc settings this process started with (glibc read them then).
MALLOC_SETTINGS = " ".join(f"{name}={os.environ[name]}" for name in MALLOC_ENVIRONMENT
                           if name in os.environ) or "glibc's defaults"

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from engine.data import ArithmeticCorpus  # noqa: E402
from engine.models import Decoder, DecoderConfig  # noqa: E402
from engine.ops import gelu, matmul  # noqa: E402
from engine.optim import Adam  # noqa: E402
from engine.tensor import TensorValue  # noqa: E402

DEPTHS = (2, 4, 8)
BATCH = 16
BLAS_MODES = {"BLAS one thread (pinned)": functools.partial(threadpool_limits, 1, "blas"),
              "BLAS two threads": functools.partial(threadpool_limits, 2, "blas")}


def training_step(depth: int) -> Callable[[], None]:
    corpus = ArithmeticCorpus()
    config = DecoderConfig(vocab_size=corpus.tokenizer.vocab_size,
                           context=corpus.sequence_length, width=32, depth=depth, heads=4)
    model = Decoder(config)
    optimizer = Adam(model.parameters(), lr=3e-3, clip_norm=1.0)
    rng = np.random.default_rng(0)

    def step() -> None:
        inputs, targets = corpus.batch("train", BATCH, rng)
        optimizer.zero_grad()
        model.loss(inputs, targets).backward()
        optimizer.step()

    return step


def op_cases() -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(32, 32)), rng.normal(size=(32, 32))
    seed = np.ones((32, 32))
    c0, c1 = math.sqrt(2.0 / math.pi), 0.044715

    def engine(fn: Callable[[TensorValue, TensorValue], TensorValue]) -> Callable[[], None]:
        def run() -> None:
            x, y = TensorValue.parameter(a), TensorValue.parameter(b)
            fn(x, y).backward_with_seed(seed)
        return run

    def numpy_matmul() -> object:
        return a @ b, seed @ b.T, a.T @ seed

    def numpy_add() -> object:
        return a + b, seed.copy(), seed.copy()

    def numpy_gelu() -> object:
        t = np.tanh(c0 * (a + c1 * (a * a * a)))
        value = 0.5 * a * (1.0 + t)
        slope = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * c0 * (1.0 + 3 * c1 * a * a)
        return value, seed * slope

    return {
        "floor (empty call)": lambda: None,
        "matmul engine": engine(matmul),
        "matmul numpy": numpy_matmul,
        "add engine": engine(lambda x, y: x + y),
        "add numpy": numpy_add,
        "gelu engine": engine(lambda x, y: gelu(x)),
        "gelu numpy": numpy_gelu,
    }


def per_call(func: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        func()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="interleaved repeats")
    parser.add_argument("--steps", type=int, default=20, help="training steps per repeat")
    arguments = parser.parse_args()

    steps = {depth: training_step(depth) for depth in DEPTHS}
    for step in steps.values():  # warm-up: first allocations, imports, caches
        for _ in range(3):
            step()
    step_times: dict[tuple[str, int], list[float]] = {
        (blas, depth): [] for blas in BLAS_MODES for depth in DEPTHS}
    for _ in range(arguments.repeat):
        for blas in BLAS_MODES:
            with BLAS_MODES[blas]():
                for depth, step in steps.items():
                    step_times[blas, depth].append(per_call(step, arguments.steps))
    print(f"training step (d=32, 4 heads, batch 16 x 30 tokens, Adam; malloc: {MALLOC_SETTINGS})")
    for blas, depth in step_times:
        median = statistics.median(step_times[blas, depth])
        print(f"  {blas:22s} depth {depth}: {median * 1e3:7.2f} ms/step  "
              f"{1 / median:7.1f} steps/s")

    cases = op_cases()
    op_times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(arguments.repeat):
        for name, func in cases.items():
            op_times[name].append(per_call(func, 2000))
    medians = {name: statistics.median(times) for name, times in op_times.items()}
    floor = medians["floor (empty call)"]
    print("per op, forward + backward on [32, 32] (median µs per call)")
    print(f"  floor (empty call): {floor * 1e6:7.2f}")
    for op in ("matmul", "add", "gelu"):
        engine, bare = medians[f"{op} engine"], medians[f"{op} numpy"]
        print(f"  {op:6s} engine {engine * 1e6:7.2f}  numpy {bare * 1e6:7.2f}  "
              f"overhead {(engine - bare) * 1e6:7.2f}")


if __name__ == "__main__":
    main()
