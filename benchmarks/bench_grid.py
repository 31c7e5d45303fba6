"""Hand-run benchmark: seeds per second of the labs' training grids, on every core and in turn.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_grid.py [--seeds N] [--repeat R]

For one arm of each lab's grid (the decoder lab's residual pre-norm decoder of eight blocks at
the lab's learning rate, in the lab's float32 and in float64; the gradients lab's residual
stack of thirty-two blocks with a zero start), it trains ``--seeds`` cells with no cell
cache, through `engine.experiments.grid`, once on every usable core and once with the grid
limited to one core (the floor: the same cells in turn), alternately, ``--repeat`` times, and
prints the median seeds per second of each and their ratio. Nothing here is asserted:
timings are not deterministic, so they belong here, never in a trace or on a page.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.numerics import pin  # noqa: E402

pin()  # before numpy loads: the kernels the engine's own runs use

from engine.data import ArithmeticCorpus  # noqa: E402
from engine.experiments import grid  # noqa: E402
from engine.experiments.gradient_flow import cells as stack_cells  # noqa: E402
from engine.experiments.gradient_flow.training import StackTrainingConfig  # noqa: E402
from engine.experiments.residual_stream import cells as decoder_cells  # noqa: E402
from engine.experiments.residual_stream.training import DecoderTrainingConfig  # noqa: E402


def arms(seeds: int) -> dict[str, tuple[list[object], object]]:
    """Each lab's benchmarked arm: its cells and the function that trains one."""
    decoder = DecoderTrainingConfig()
    stacks = StackTrainingConfig()
    first_decoder = decoder.cells()[0].setting
    double = dataclasses.replace(first_decoder, precision="float64")
    first_stack = stacks.cells()[0].setting
    corpus = ArithmeticCorpus()
    return {
        **{f"decoder, eight blocks, {setting.precision}": (
            [decoder_cells.TrainingCell(setting, "residual", "pre", 8, decoder.lr, 0, s)
             for s in range(seeds)], functools.partial(decoder_cells.train_cell, corpus))
           for setting in (first_decoder, double)},
        "stack, thirty-two blocks": (
            [stack_cells.StackCell(first_stack, "residual", "zero", 32, stacks.lr, s)
             for s in range(seeds)], stack_cells.train_cell),
    }


def seeds_per_second(cells: list[object], train: object, cores: set[int] | None) -> float:
    """Train ``cells`` through the grid (on ``cores`` only, when given); seeds per second."""
    everywhere = os.sched_getaffinity(0)
    if cores is not None:
        os.sched_setaffinity(0, cores)
    try:
        start = time.perf_counter()
        grid.run_grid(cells, train)
        return len(cells) / (time.perf_counter() - start)
    finally:
        os.sched_setaffinity(0, everywhere)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4, help="cells per arm (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    options = parser.parse_args()
    os.environ.pop(grid.CACHE_VARIABLE, None)  # every cell trained, none read
    one_core = {min(os.sched_getaffinity(0))}
    print(f"{len(os.sched_getaffinity(0))} usable cores, {options.seeds} seeds per arm")
    for name, (cells, train) in arms(options.seeds).items():
        parallel, serial = [], []
        for _ in range(options.repeat):
            parallel.append(seeds_per_second(cells, train, None))
            serial.append(seeds_per_second(cells, train, one_core))
        fast, floor = statistics.median(parallel), statistics.median(serial)
        print(f"{name:<26} every core {fast:6.3f} seeds/s   one core {floor:6.3f} seeds/s   "
              f"ratio {fast / floor:4.2f}")


if __name__ == "__main__":
    main()
