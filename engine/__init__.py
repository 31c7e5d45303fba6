"""A small numpy (float64) reverse-mode autodiff engine, the chapter's fixtures and the labs'
models and experiments: everything that computes a traced value.

Public surface: `TensorValue` and `GraphRetention` (engine.tensor), the ops in
engine.ops, the layers and block stacks in engine.nn, seeded initializers (engine.init),
`SGD` and `Adam` (engine.optim), `gradcheck` (engine.gradcheck), the chapter's fixtures
(engine.fixtures), the decoder and its training loop (engine.models), the arithmetic corpus
(engine.data), the labs' experiments (engine.experiments), `render_report` (engine.report)
and `render_trace` (engine.trace).
Run ``python -m engine --help`` for the command line. Importing the package raises glibc's
malloc thresholds once (engine/allocator.py), which changes speed, never results.
"""

from engine.allocator import keep_freed_memory
from engine.errors import (
    ConfigError,
    EngineError,
    GradcheckError,
    GradientError,
    IndicesError,
    OperandError,
    ResidualShapeError,
    ShapeError,
)
from engine.tensor import GraphRetention, TensorValue

keep_freed_memory()  # speed only: see engine/allocator.py

__all__ = [
    "ConfigError",
    "EngineError",
    "GradcheckError",
    "GradientError",
    "GraphRetention",
    "IndicesError",
    "OperandError",
    "ResidualShapeError",
    "ShapeError",
    "TensorValue",
]
