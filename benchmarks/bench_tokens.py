"""Hand-run benchmark: the decoder lab's model, time per token on this CPU.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_tokens.py [--repeat N] [--new-tokens K]

The model is the decoder lab's (residual, pre-norm, d = 32, 4 heads, MLP 4d, the arithmetic
corpus's vocabulary and context) at depths 1, 2, 4 and 8, in float32 (as the lab trains) and
float64; its weights are the initial ones, which cost the same time as trained ones. Two
measurements, each a forward pass only (the engine records its tape all the same):

1. Reading: one forward over a batch of 16 validation sequences of the full context; the
   time divided by the tokens read.
2. Writing: greedy generation for one sequence, starting from the first sequence's prompt up
   to and including its first ``=``, ``K`` new tokens, each a forward over the whole context
   so far (the engine keeps no cache of keys and values); the time per new token.

The floor is the one-block model of the same run: a depth's figure over the floor's says
what its blocks add. Models are interleaved within each repeat; every figure is a median
over repeats. Nothing here is asserted: timings are not deterministic, so they belong here,
never in a trace or on a page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.numerics import pin  # noqa: E402

pin()  # the kernels and the one BLAS thread of every engine run, before numpy loads
# (its malloc settings come from the environment it starts in: run it through ./dev's, or
# export engine/allocator.py's MALLOC_ENVIRONMENT)

import numpy as np  # noqa: E402

from engine.data import ArithmeticCorpus  # noqa: E402
from engine.models import Decoder, DecoderConfig  # noqa: E402

DEPTHS = (1, 2, 4, 8)
PRECISIONS = ("float32", "float64")
BATCH = 16


def model(corpus: ArithmeticCorpus, depth: int, precision: str) -> Decoder:
    return Decoder(DecoderConfig(vocab_size=corpus.tokenizer.vocab_size,
                                 context=corpus.sequence_length, width=32, depth=depth,
                                 heads=4, precision=precision))


def reading(decoder: Decoder, inputs: np.ndarray) -> float:
    """Seconds per token of one forward over ``inputs``."""
    start = time.perf_counter()
    decoder(inputs)
    return (time.perf_counter() - start) / inputs.size


def writing(decoder: Decoder, prompt: np.ndarray, new_tokens: int) -> float:
    """Seconds per new token of greedy generation from ``prompt`` ``[1, T]``."""
    tokens = prompt
    start = time.perf_counter()
    for _ in range(new_tokens):
        logits = decoder(tokens).value[0, -1]
        tokens = np.concatenate([tokens, [[int(np.argmax(logits))]]], axis=1)
    return (time.perf_counter() - start) / new_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="interleaved repeats")
    parser.add_argument("--new-tokens", type=int, default=12, help="tokens each generation adds")
    arguments = parser.parse_args()
    corpus = ArithmeticCorpus()
    inputs, _ = corpus.fixed_sequences("validation", BATCH)
    equals = int(np.argmax(inputs[0] == corpus.tokenizer.id("="))) + 1
    prompt = inputs[:1, :equals]
    if prompt.shape[1] + arguments.new_tokens > corpus.sequence_length:
        parser.error(f"--new-tokens: at most {corpus.sequence_length - prompt.shape[1]}")
    models = {(depth, precision): model(corpus, depth, precision)
              for precision in PRECISIONS for depth in DEPTHS}
    for decoder in models.values():  # warm-up: first allocations and caches
        reading(decoder, inputs)
        writing(decoder, prompt, 2)
    times: dict[tuple[str, int, str], list[float]] = {}
    for _ in range(arguments.repeat):
        for (depth, precision), decoder in models.items():
            times.setdefault(("read", depth, precision), []).append(reading(decoder, inputs))
            times.setdefault(("write", depth, precision), []).append(
                writing(decoder, prompt, arguments.new_tokens))
    print(f"decoder d=32, 4 heads; reading {BATCH} x {inputs.shape[1]} tokens, writing "
          f"{arguments.new_tokens} tokens after a {prompt.shape[1]}-token prompt; median of "
          f"{arguments.repeat}")
    for kind, unit, scale in (("read", "µs", 1e6), ("write", "ms", 1e3)):
        for precision in PRECISIONS:
            floor = statistics.median(times[kind, 1, precision])
            for depth in DEPTHS:
                median = statistics.median(times[kind, depth, precision])
                print(f"  {kind:5s} {precision} depth {depth}: {median * scale:8.2f} {unit}/token"
                      f"  ({median / floor:4.2f} x the one-block floor)")


if __name__ == "__main__":
    main()
