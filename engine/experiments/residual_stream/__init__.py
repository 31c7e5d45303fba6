"""The decoder lab, "The residual stream in a small trained decoder": experiments whose
results are trace ``residual-stream-v4`` (declared in tracefile/schemas/residual_stream.py).

Modules: ``training`` (zero, the corpus's facts; one, which decoders train, over a grid whose
cells ``cells`` trains), ``stream`` (two,
the stream is a sum; three, the logit lens and early exit), ``surgery`` (four, lesions and
pruning), ``quantization`` (five), ``precision`` (six, half-precision formats), ``cost``
(seven, arithmetic and the tape's memory), ``projection`` (eight, projection shortcuts);
``common`` holds the shared forward walk and helpers, and ``results`` runs them all
(`residual_stream_results`, the trace's producer). The models are trained once per run;
every analysis reads those trained weights and changes none of them.
"""

from engine.experiments.residual_stream.results import (
    LAB_SEED,
    ResidualStreamResults,
    residual_stream_results,
)

__all__ = ["LAB_SEED", "ResidualStreamResults", "residual_stream_results"]
