"""The decoder lab, "The residual stream in a small trained decoder": experiments whose
results are trace ``residual-stream-v4`` (declared in tracefile/schemas/residual_stream.py).

Each experiment is one module: its configuration, its function of a seed and that
configuration, the rules of the claims it decides, and its registration
(`engine.experiments.registry`). Modules: ``corpus`` (zero, the corpus's facts, and the
lab's one corpus), ``training`` (one, which decoders train, over a grid whose cells ``cells``
trains; its rules are ``training_rules``), ``long_training`` (one b, the shallowest decoders
trained longer), ``analysis`` (which trained models the analyses read), ``stream`` (two, the
stream is a sum; three, the logit lens and early exit), ``surgery`` (four, lesions, pruning
and reordering), ``quantization`` (five), ``precision`` (six, half-precision formats),
``cost`` (seven, arithmetic and the tape's memory), ``projection`` (eight, projection
shortcuts); ``common`` holds the shared forward walk and helpers, and ``results`` runs them
all (`residual_stream_results`, the trace's producer).
"""

from engine.experiments.residual_stream.results import LAB_SEED, residual_stream_results

__all__ = ["LAB_SEED", "residual_stream_results"]
