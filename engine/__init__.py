"""A small numpy (float64) reverse-mode autodiff engine, the chapter's worked example and the labs'
models and experiments: everything that computes a traced value.

Public surface, each imported from its module: `TensorValue` and `GraphRetention`
(engine.tensor), the ops in engine.ops, the layers and block stacks in engine.nn, seeded
initializers (engine.init), `SGD` and `Adam` (engine.optim), `gradcheck` (engine.gradcheck),
the chapter's worked example (engine.worked_example), the decoder and its training loop
(engine.models), the arithmetic corpus (engine.data), the labs' experiments (engine.experiments),
`render_report` (engine.report), `trace_text` (engine.trace) and the pinned numerics every
run computes with (engine.numerics). The package itself holds only the errors.
Run ``python -m engine --help`` for the command line. Importing the package loads no numpy, so
that `engine.numerics.pin()` can still choose its kernels, and changes nothing in the process:
the speed settings (engine/allocator.py) are the runner's (``python -m engine``).
"""

from engine.errors import (
    ConfigError,
    EngineError,
    GradcheckError,
    GradientError,
    IndicesError,
    NumericsError,
    OperandError,
    ResidualShapeError,
    ShapeError,
)

__all__ = [
    "ConfigError",
    "EngineError",
    "GradcheckError",
    "GradientError",
    "IndicesError",
    "NumericsError",
    "OperandError",
    "ResidualShapeError",
    "ShapeError",
]
