"""Writer of the residual-connections-v1 trace, the engine's only output to the site.

Contract: `render_trace()` returns the trace for `chapter_results()` exactly as the grammar
in docs/trace.md ("Trace grammar") defines it: header, one record per line with keys in
the documented order, footer, ``\\n`` line endings and a final newline. Floats are written
as ``repr(float(x))`` (shortest round-trip form); a non-finite float, a name with a
forbidden character or a word outside ``[a-z][a-z-]*`` raises `EngineError` instead of
writing a trace the site would reject. Same inputs, same bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from engine.errors import EngineError
from engine.fixtures import ChapterResults, chapter_results

VERSION = "residual-connections-v1"
HEADER = f"TRACE {VERSION} BEGIN"
FOOTER = f"TRACE {VERSION} END"

_NAME = re.compile(r"[^\s=,\[\]]+")
_WORD = re.compile(r"[a-z][a-z-]*")


def trace_float(value: float) -> str:
    number = float(value)
    if not math.isfinite(number):
        raise EngineError(f"trace: refusing to write the non-finite float {number!r}")
    return repr(number)


def trace_vector(values: Iterable[float]) -> str:
    items = [trace_float(value) for value in values]
    if not items:
        raise EngineError("trace: a vector needs at least one element")
    return "[" + ",".join(items) + "]"


def trace_shape(shape: Sequence[int]) -> str:
    if not shape:
        raise EngineError("trace: a shape needs at least one dimension")
    return "[" + ",".join(str(int(size)) for size in shape) + "]"


def trace_bool(flag: bool) -> str:
    return "true" if flag else "false"


def trace_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise EngineError(f"trace: {name!r} is not a valid name (no spaces, '=', ',', '[', ']')")
    return name


def trace_names(names: Sequence[str]) -> str:
    if not names:
        raise EngineError("trace: a names value needs at least one name")
    return ",".join(trace_name(name) for name in names)


def trace_word(word: str) -> str:
    if not _WORD.fullmatch(word):
        raise EngineError(f"trace: {word!r} is not a valid word ([a-z][a-z-]*)")
    return word


def record(kind: str, *pairs: tuple[str, str]) -> str:
    """One record line (without its newline); values must already be written."""
    return " ".join([kind, *(f"{key}={value}" for key, value in pairs)])


def _merge_records(r: ChapterResults) -> list[str]:
    p = r.primary
    return [
        record(
            "CONFIG", ("name", trace_word(r.name)), ("chapter", str(r.chapter)),
            ("next-chapter", str(r.next_chapter)), ("shape", trace_shape(p.input_shape)),
            ("branch-parameter", trace_name(p.branch_parameter)),
            ("weight-shape", trace_shape(p.weight_shape)), ("weight", trace_vector(p.weight)),
        ),
        record(
            "FORWARD", ("input", trace_vector(p.input)),
            ("branch", trace_vector(p.branch_output)), ("output", trace_vector(p.output)),
        ),
        record(
            "BACKWARD", ("upstream", trace_vector(p.upstream)),
            ("identity", trace_vector(p.identity_gradient)),
            ("branch", trace_vector(p.branch_gradient)),
            ("input", trace_vector(p.input_gradient)),
        ),
        record(
            "PARAMETER", ("name", trace_name(p.branch_parameter)),
            ("shape", trace_shape(p.weight_gradient_shape)),
            ("gradient", trace_vector(p.weight_gradient)),
        ),
    ]


def _edge_case_records(r: ChapterResults) -> list[str]:
    zero, shape = r.zero_branch, r.shape_check
    return [
        record(
            "ZERO-BRANCH", ("name", trace_name(zero.parameter)),
            ("output", trace_vector(zero.output)),
            ("input-gradient", trace_vector(zero.input_gradient)),
            ("weight-gradient", trace_vector(zero.weight_gradient)),
            ("weight-gradient-nonzero", trace_bool(zero.weight_gradient_nonzero)),
        ),
        record(
            "SHAPE-ERROR", ("identity", trace_shape(shape.identity_shape)),
            ("branch", trace_shape(shape.branch_shape)),
            ("broadcastable", trace_bool(shape.broadcastable)),
            ("rejected", trace_bool(shape.rejected)),
        ),
        record(
            "SHARED-OPERAND", ("upstream", trace_vector(r.shared_operand.upstream)),
            ("gradient", trace_vector(r.shared_operand.gradient)),
        ),
    ]


def _stack_records(r: ChapterResults) -> list[str]:
    config, plain, residual = r.stack_config, r.plain_stack, r.residual_stack
    lines = [
        record(
            "STACK-CONFIG", ("layers", str(config.layers)),
            ("branch-factor", trace_float(config.branch_factor)),
            ("residual-factor", trace_float(config.residual_factor)),
        )
    ]
    for depth, (plain_value, residual_value) in enumerate(
        zip(plain.values, residual.values, strict=True)
    ):
        lines.append(
            record(
                "STACK", ("depth", str(depth)), ("plain", trace_vector(plain_value)),
                ("residual", trace_vector(residual_value)),
            )
        )
    lines.append(
        record(
            "STACK-GRADIENT", ("plain", trace_vector(plain.input_gradient)),
            ("residual", trace_vector(residual.input_gradient)),
            ("plain-parameters", trace_names(plain.parameter_names)),
            ("residual-parameters", trace_names(residual.parameter_names)),
            ("parameters-finite-nonzero", trace_bool(
                plain.parameters_finite_nonzero and residual.parameters_finite_nonzero
            )),
        )
    )
    return lines


def _check_records(r: ChapterResults) -> list[str]:
    g, proof = r.gradcheck, r.proof
    return [
        record(
            "RETENTION", ("depth", str(r.retention.depth)),
            ("plain", trace_float(r.retention.plain)),
            ("residual", trace_float(r.retention.residual)),
        ),
        record(
            "GRADCHECK", ("input-checks", str(g.input_checks)),
            ("weight-checks", str(g.weight_checks)), ("step", trace_float(g.step)),
            ("tolerance", trace_float(g.tolerance)), ("max-error", trace_float(g.max_error)),
            ("passed", trace_bool(g.passed)),
        ),
        record(
            "PROOF", ("identity", trace_word(proof.identity)),
            ("gradient", trace_word(proof.gradient)),
            ("parameters", trace_word(proof.parameters)),
            ("broadcast", trace_word(proof.broadcast)),
        ),
        record("REPLAY", ("bitwise", trace_bool(r.replay_bitwise))),
    ]


def render_trace(results: ChapterResults | None = None) -> str:
    """The complete trace text for ``results`` (by default, a fresh `chapter_results()`)."""
    r = chapter_results() if results is None else results
    scaled = [
        record("SCALED", ("alpha", trace_float(s.alpha)), ("output", trace_vector(s.output)))
        for s in r.scaled
    ]
    alphas = [s.alpha for s in r.scaled]
    if alphas != sorted(set(alphas)):
        raise EngineError(f"trace: SCALED alphas must strictly increase, got {alphas!r}")
    lines = [
        HEADER,
        *_merge_records(r),
        *_edge_case_records(r),
        *scaled,
        *_stack_records(r),
        *_check_records(r),
        FOOTER,
    ]
    return "\n".join(lines) + "\n"
