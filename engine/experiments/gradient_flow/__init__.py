"""The gradients lab, "Gradients through depth": experiments whose results are trace
``gradient-flow-v4`` (declared in tracefile/schemas/gradient_flow.py).

Each experiment is one module: its configuration, its function of an explicit seed and that
configuration (frozen results; every gradient is measured by the engine's backward, never
taken from a formula), the rules of the claims it decides, and its registration
(`engine.experiments.registry`). Modules: ``scalar`` (1, the +1 over ten layers),
``gradient_paths`` (2, the product expanded into paths), ``sweep`` (3, depth sweep at
initialization), ``silent`` (4, three ways to be silent), ``placement`` (5, where the norm
goes), ``training`` (6, trainability), ``identity`` and ``clipping`` (6, its controls),
``explorer`` (7, the explorer grid); ``graded``, ``cells`` and ``common`` are shared helpers
and ``results`` runs them all (`gradient_flow_results`, the trace's producer).
"""

from engine.experiments.gradient_flow.results import LAB_SEED, gradient_flow_results

__all__ = ["LAB_SEED", "gradient_flow_results"]
