"""``residual-connections-v2``: the chapter's merge, its edge cases, the stack and the checks.

One ``Key`` per traced value. ``source`` paths point into the engine's ``ChapterResults``
(engine/worked_example/chapter.py); the parser ignores them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracefile.schema import Invariant, Key, RecordSpec, TraceSchema

Get = Callable[[str], Any]

X = "CONFIG.shape"  # every vector of the merge has the input's shape
W = "CONFIG.weight-shape"

RECORDS = (
    RecordSpec("CONFIG", (
        Key("name", "word", doc="the chapter's worked example"),
        Key("chapter", "int", doc="the course chapter this page is"),
        Key("next-chapter", "int", doc="the chapter that comes next"),
        Key("shape", "shape", source="primary.input_shape", doc="the input's shape"),
        Key("branch-parameter", "name", source="primary.branch_parameter",
            doc="the name of the branch's weight"),
        Key("weight-shape", "shape", source="primary.weight_shape",
            doc="the branch weight's shape"),
        Key("weight", "vector", length="weight-shape", source="primary.weight",
            doc="the branch weight W, row by row", along="entry {n}"),
    ), source="", doc="the chapter, and its worked example's input shape and branch weight"),
    RecordSpec("FORWARD", (
        Key("input", "vector", X, doc="the input x of the chapter's worked example",
            along="component {n}"),
        Key("branch", "vector", X, source="branch_output", doc="the branch's output F(x)",
            along="component {n}"),
        Key("output", "vector", X, doc="the block's output y = x + F(x)",
            along="component {n}"),
    ), source="primary", doc="y = x + F(x) for the fixture"),
    RecordSpec("BACKWARD", (
        Key("upstream", "vector", X, doc="the gradient arriving at y from above",
            along="component {n}"),
        Key("identity", "vector", X, source="identity_gradient",
            doc="the part of x's gradient the identity path carries: the upstream gradient "
                "itself",
            along="component {n}"),
        Key("branch", "vector", X, source="branch_gradient",
            doc="the part of x's gradient the branch carries, through F's Jacobian",
            along="component {n}"),
        Key("input", "vector", X, source="input_gradient",
            doc="x's whole gradient: the sum of the identity's part and the branch's",
            along="component {n}"),
    ), source="primary", doc="the input gradient and its two contributions"),
    RecordSpec("PARAMETER", (
        Key("name", "name", source="branch_parameter", doc="the branch weight's name"),
        Key("shape", "shape", source="weight_gradient_shape", doc="its gradient's shape"),
        Key("gradient", "vector", "shape", source="weight_gradient",
            doc="the branch weight's gradient, row by row", along="entry {n}"),
    ), source="primary", doc="the branch weight's gradient"),
    RecordSpec("ZERO-BRANCH", (
        Key("name", "name", source="parameter", doc="the zeroed weight's name"),
        Key("output", "vector", X, doc="the block's output: the input itself",
            along="component {n}"),
        Key("input-gradient", "vector", X, doc="x's gradient: the upstream gradient itself",
            along="component {n}"),
        Key("weight-gradient", "vector", W, doc="the zero weight's gradient, row by row",
            along="entry {n}"),
        Key("weight-gradient-nonzero", "bool", doc="the zero weight still gets a gradient"),
    ), source="zero_branch", doc="an all-zero branch weight"),
    RecordSpec("SHAPE-ERROR", (
        Key("identity", "shape", source="identity_shape", doc="the identity operand's shape"),
        Key("branch", "shape", source="branch_shape", doc="the branch operand's shape"),
        Key("broadcastable", "bool", doc="numpy would broadcast the two"),
        Key("rejected", "bool", doc="residual_add refused them"),
    ), source="shape_check", doc="mismatched shapes: numpy broadcasts, residual_add refuses"),
    RecordSpec("SHARED-OPERAND", (
        Key("upstream", "vector", X, doc="the gradient arriving at x + x",
            along="component {n}"),
        Key("gradient", "vector", X, doc="x's gradient: both edges' parts added",
            along="component {n}"),
    ), source="shared_operand", doc="x + x: one operand reached along two edges"),
    RecordSpec("SCALED", (
        Key("alpha", "float", doc="the branch's scale alpha"),
        Key("output", "vector", X, doc="the block's output y = x + alpha F(x)",
            along="component {n}"),
    ), source="scaled", keyed_by="alpha", doc="y = x + alpha F(x) for several alpha"),
    RecordSpec("STACK-CONFIG", (
        Key("layers", "int", doc="layers in each stack"),
        Key("branch-factor", "float",
            doc="every layer's weight is this factor times the identity matrix"),
        Key("residual-factor", "float",
            doc="so a residual layer multiplies by one plus that factor"),
    ), source="stack_config", doc="the stack of scalar-factor layers"),
    RecordSpec("STACK", (
        Key("depth", "int", doc="layers applied so far"),
        Key("plain", "vector", X, doc="the plain stack's activation", along="component {n}"),
        Key("residual", "vector", X, doc="the residual stack's activation",
            along="component {n}"),
    ), source="stack_rows", keyed_by="depth", runs_to="STACK-CONFIG.layers",
        doc="the activations after each layer, plain and residual"),
    RecordSpec("STACK-GRADIENT", (
        Key("plain", "vector", X, source="plain_stack.input_gradient",
            doc="the plain stack's input gradient", along="component {n}"),
        Key("residual", "vector", X, source="residual_stack.input_gradient",
            doc="the residual stack's input gradient", along="component {n}"),
        Key("plain-parameters", "names", source="plain_stack.parameter_names",
            doc="the plain stack's parameters, in order", along="parameter {n}"),
        Key("residual-parameters", "names", source="residual_stack.parameter_names",
            doc="the residual stack's parameters, in order", along="parameter {n}"),
        Key("parameters-finite-nonzero", "bool", source="stack_parameters_finite_nonzero",
            doc="every parameter's gradient is finite and not zero"),
    ), source="", doc="the input gradient through both stacks"),
    RecordSpec("RETENTION", (
        Key("depth", "int", doc="layers in each stack"),
        Key("plain", "float",
            doc="the plain stack's input gradient over the upstream gradient"),
        Key("residual", "float",
            doc="the residual stack's input gradient over the upstream gradient"),
    ), source="retention", doc="the gradient kept after the deepest layer"),
    RecordSpec("GRADCHECK", (
        Key("input-checks", "int", doc="input entries checked"),
        Key("weight-checks", "int", doc="weight entries checked"),
        Key("step", "float", doc="the central difference's step"),
        Key("tolerance", "float", doc="the largest error allowed"),
        Key("max-error", "float", doc="the largest error found"),
        Key("passed", "bool", doc="every error is within the tolerance"),
    ), source="gradcheck", doc="central differences against the tape"),
    RecordSpec("PROOF", (
        Key("identity", "word", doc="a zero branch gives the identity"),
        Key("gradient", "word", doc="the identity passes the upstream gradient unchanged"),
        Key("parameters", "word", doc="the add itself has no parameters"),
        Key("broadcast", "word", doc="mismatched shapes are refused"),
    ), source="proof", doc="the four properties, verified"),
    RecordSpec("REPLAY", (
        Key("bitwise", "bool", source="replay_bitwise",
            doc="a second run gave the same bits"),
    ), source="", doc="a second run gave the same bits"),
    RecordSpec("ZERO-INPUT", (
        Key("input", "vector", X, doc="the zero input", along="component {n}"),
        Key("output", "vector", X, doc="the branch's output there", along="component {n}"),
        Key("jacobian", "vector", W, doc="the branch's Jacobian there, row by row",
            along="entry {n}"),
    ), source="zero_input", doc="the nonzero branch at the zero vector: zero output, and its "
       "Jacobian there (rows are outputs), still the transposed weight"),
    RecordSpec("SILENT-SCALE", (
        Key("alpha", "float", doc="the zero scale in front of the branch"),
        Key("output", "vector", X, doc="the block's output: the input itself",
            along="component {n}"),
        Key("weight-gradient", "vector", W, doc="the branch weight's gradient, row by row",
            along="entry {n}"),
        Key("alpha-gradient", "float", doc="the scale's gradient"),
        Key("weight-moves-first", "bool", doc="the first step changes the weight"),
        Key("alpha-moves-first", "bool", doc="the first step changes the scale"),
    ), source="silent_scale", doc="a branch silenced by a zero scale in front of it: the "
       "weight gets no gradient, the scale does"),
    RecordSpec("STACK-LAYER", (
        Key("layer", "int", doc="the layer, first layer first"),
        Key("plain", "vector", W, doc="the plain layer's weight gradient", along="entry {n}"),
        Key("residual", "vector", W, doc="the residual branch's weight gradient",
            along="entry {n}"),
    ), source="stack_layer_rows", keyed_by="layer",
        doc="each layer's weight gradient in both stacks, first layer first"),
)



def _sum(get: Get, a: str, b: str) -> tuple[float, ...]:
    return tuple(x + y for x, y in zip(get(a), get(b), strict=True))


def _products(get: Get, a: str, b: str) -> tuple[float, ...]:
    return tuple(x * y for x, y in zip(get(a), get(b), strict=True))


def _transposed(get: Get, path: str) -> tuple[float, ...]:
    """A square row-major matrix, transposed."""
    values = get(path)
    size = round(len(values) ** 0.5)
    return tuple(values[row * size + column] for column in range(size) for row in range(size))


def _outer(get: Get, column: str, row: str) -> tuple[float, ...]:
    """Row-major ``columnᵀ · row``: the weight gradient of ``x W`` seeded with ``ȳ``."""
    return tuple(x * y for x in get(column) for y in get(row))


INVARIANTS = (
    Invariant("FORWARD.output = FORWARD.input + FORWARD.branch", "FORWARD",
              lambda get: (get("FORWARD.output"), _sum(get, "FORWARD.input", "FORWARD.branch"))),
    Invariant("BACKWARD.identity = BACKWARD.upstream", "BACKWARD",
              lambda get: (get("BACKWARD.identity"), get("BACKWARD.upstream"))),
    Invariant("BACKWARD.input = BACKWARD.identity + BACKWARD.branch", "BACKWARD",
              lambda get: (get("BACKWARD.input"),
                           _sum(get, "BACKWARD.identity", "BACKWARD.branch"))),
    Invariant("PARAMETER.gradient = FORWARD.inputᵀ BACKWARD.upstream", "PARAMETER",
              lambda get: (get("PARAMETER.gradient"),
                           _outer(get, "FORWARD.input", "BACKWARD.upstream"))),
    Invariant("ZERO-BRANCH.output = FORWARD.input", "ZERO-BRANCH",
              lambda get: (get("ZERO-BRANCH.output"), get("FORWARD.input"))),
    Invariant("ZERO-BRANCH.input-gradient = BACKWARD.upstream", "ZERO-BRANCH",
              lambda get: (get("ZERO-BRANCH.input-gradient"), get("BACKWARD.upstream"))),
    Invariant("ZERO-BRANCH.weight-gradient-nonzero = (ZERO-BRANCH.weight-gradient ≠ zero)",
              "ZERO-BRANCH",
              lambda get: (get("ZERO-BRANCH.weight-gradient-nonzero"),
                           any(v != 0 for v in get("ZERO-BRANCH.weight-gradient")))),
    Invariant("SHARED-OPERAND.gradient = twice SHARED-OPERAND.upstream", "SHARED-OPERAND",
              lambda get: (get("SHARED-OPERAND.gradient"),
                           tuple(2 * v for v in get("SHARED-OPERAND.upstream")))),
    Invariant("STACK-CONFIG.residual-factor = one + STACK-CONFIG.branch-factor", "STACK-CONFIG",
              lambda get: (get("STACK-CONFIG.residual-factor"),
                           1.0 + get("STACK-CONFIG.branch-factor"))),
    Invariant("STACK at depth zero = FORWARD.input, plain and residual", "STACK",
              lambda get: ((get("STACK[0].plain"), get("STACK[0].residual")),
                           (get("FORWARD.input"), get("FORWARD.input")))),
    Invariant("RETENTION.depth = STACK-CONFIG.layers", "RETENTION",
              lambda get: (get("RETENTION.depth"), get("STACK-CONFIG.layers"))),
    Invariant("RETENTION = STACK-GRADIENT / BACKWARD.upstream, first components, plain and "
              "residual",
              "RETENTION",
              lambda get: ((get("RETENTION.plain"), get("RETENTION.residual")),
                           (get("STACK-GRADIENT.plain[0]") / get("BACKWARD.upstream[0]"),
                            get("STACK-GRADIENT.residual[0]") / get("BACKWARD.upstream[0]")))),
    Invariant("ZERO-INPUT.jacobian = CONFIG.weightᵀ", "ZERO-INPUT",
              lambda get: (get("ZERO-INPUT.jacobian"), _transposed(get, "CONFIG.weight"))),
    Invariant("SILENT-SCALE.output = FORWARD.input (a zero scale silences the branch)",
              "SILENT-SCALE",
              lambda get: (get("SILENT-SCALE.output"), get("FORWARD.input"))),
    Invariant("SILENT-SCALE.alpha-gradient = FORWARD.branch · BACKWARD.upstream", "SILENT-SCALE",
              lambda get: (get("SILENT-SCALE.alpha-gradient"),
                           sum(_products(get, "FORWARD.branch", "BACKWARD.upstream")))),
    Invariant("SILENT-SCALE.weight-moves-first = (SILENT-SCALE.weight-gradient ≠ zero)",
              "SILENT-SCALE",
              lambda get: (get("SILENT-SCALE.weight-moves-first"),
                           any(v != 0 for v in get("SILENT-SCALE.weight-gradient")))),
    Invariant("GRADCHECK.passed = (GRADCHECK.max-error ≤ GRADCHECK.tolerance)", "GRADCHECK",
              lambda get: (get("GRADCHECK.passed"),
                           get("GRADCHECK.max-error") <= get("GRADCHECK.tolerance"))),
)

SCHEMA = TraceSchema(
    "residual-connections", 2, RECORDS, "engine.worked_example.chapter:chapter_results",
    title="The chapter",
    doc="the fixtures of the chapter page: the merge, its gradient, edge cases, the stack",
    invariants=INVARIANTS,
)
