"""The learner report: every Chapter 24 fact as deterministic ``key=value`` lines.

Contract: `render_report()` renders `chapter_results()` as plain text, one fact per line,
``\\n`` line endings and a final newline. Keys are snake_case and unique; a value that
holds several facts lists them as ``field:value`` separated by single spaces. Numbers, vectors,
shapes and booleans are written exactly as the trace writes them (``tracefile.values``), so the
report and the trace can never disagree on a digit. The text is frozen in
tests/golden/learner-report.txt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.errors import format_shape
from engine.gradcheck import GradcheckResult
from engine.worked_example import ChapterResults, chapter_results
from tracefile.values import write_value


def _vector(values: Iterable[float]) -> str:
    return write_value("vector", values)


def _float(value: float) -> str:
    return write_value("float", value)


def _bool(flag: bool) -> str:
    return write_value("bool", flag)


def _shaped(shape: Sequence[int], values: Iterable[float]) -> str:
    return f"shape:{format_shape(shape)} values:{_vector(values)}"


def _merge_lines(r: ChapterResults) -> list[str]:
    p, zero, mismatch = r.primary, r.zero_branch, r.shape_check
    broadcast = f"broadcasts-to-{format_shape(mismatch.broadcast_shape)}"
    return [
        f"input={_shaped(p.input_shape, p.input)}",
        f"branch_weight=name:{p.branch_parameter} {_shaped(p.weight_shape, p.weight)}",
        f"branch_update=F(x) {_shaped(p.input_shape, p.branch_output)}",
        f"merged_output=x+F(x) {_shaped(p.output_shape, p.output)}",
        f"upstream_gradient={_shaped(p.output_shape, p.upstream)}",
        f"identity_contribution={_vector(p.identity_gradient)}",
        f"branch_contribution=measured-through-branch-alone {_vector(p.branch_gradient)}",
        f"input_gradient=identity+branch {_vector(p.input_gradient)}",
        f"branch_weight_gradient={_shaped(p.weight_gradient_shape, p.weight_gradient)}",
        f"merge_owned_parameters={p.merge_parameter_count}",
        f"zero_branch=weight:{zero.parameter} output:{_vector(zero.output)} "
        f"input_gradient:{_vector(zero.input_gradient)} "
        f"weight_gradient:{_vector(zero.weight_gradient)} "
        f"weight_gradient_nonzero:{_bool(zero.weight_gradient_nonzero)}",
        f"shape_mismatch=identity:{format_shape(mismatch.identity_shape)} "
        f"branch:{format_shape(mismatch.branch_shape)} "
        f"generic_add:{broadcast if mismatch.broadcastable else 'fails'} "
        f"residual_add:{'rejected' if mismatch.rejected else 'accepted'}",
        f"shape_mismatch_error={mismatch.message}",
        f"shared_operand=upstream:{_vector(r.shared_operand.upstream)} "
        f"gradient:{_vector(r.shared_operand.gradient)}",
        *(f"scaled[{_float(s.alpha)}]=x+alpha*F(x) {_vector(s.output)}" for s in r.scaled),
    ]


def _stack_lines(r: ChapterResults) -> list[str]:
    config, plain, residual = r.stack_config, r.plain_stack, r.residual_stack
    finite = plain.parameters_finite_nonzero and residual.parameters_finite_nonzero
    return [
        f"stack_settings=layers:{config.layers} branch_factor:{_float(config.branch_factor)} "
        f"residual_factor:{_float(config.residual_factor)}",
        *(
            f"stack[{depth}]=plain:{_vector(plain_row)} residual:{_vector(residual_row)}"
            for depth, (plain_row, residual_row) in enumerate(
                zip(plain.values, residual.values, strict=True)
            )
        ),
        f"stack_input_gradient=plain:{_vector(plain.input_gradient)} "
        f"residual:{_vector(residual.input_gradient)}",
        f"stack_parameters={','.join(plain.parameter_names + residual.parameter_names)}",
        f"stack_parameter_gradients_finite_nonzero={_bool(finite)}",
        f"retention[{r.retention.depth}]=plain:{_float(r.retention.plain)} "
        f"residual:{_float(r.retention.residual)}",
    ]


def _check_lines(label: str, result: GradcheckResult) -> list[str]:
    return [
        f"gradient_check.{label}{format_shape(check.index)}=analytic:{_float(check.analytic)} "
        f"numeric:{_float(check.numeric)} error:{_float(check.error)}"
        for check in result.checks
    ]


def _verdict_lines(r: ChapterResults) -> list[str]:
    g, proof = r.gradcheck, r.proof
    return [
        f"gradient_check=objective:sum((x+xW)^2) input_checks:{g.input_checks} "
        f"weight_checks:{g.weight_checks} step:{_float(g.step)} tolerance:{_float(g.tolerance)} "
        f"max_error:{_float(g.max_error)} passed:{_bool(g.passed)}",
        *_check_lines("input", g.input_check),
        *_check_lines("weight", g.weight_check),
        f"verified=identity:{proof.identity} gradient:{proof.gradient} "
        f"parameters:{proof.parameters} broadcast:{proof.broadcast}",
        f"replay_bitwise={_bool(r.replay_bitwise)}",
    ]


def render_report(results: ChapterResults | None = None) -> str:
    """The learner report for ``results`` (by default, a fresh `chapter_results()`)."""
    r = chapter_results() if results is None else results
    lines = [
        f"chapter={r.chapter} residual-connections",
        f"fixture={r.name}",
        "predict=with an all-zero branch weight, y and the input gradient follow the identity "
        "path alone, while the weight gradient need not vanish",
        *_merge_lines(r),
        *_stack_lines(r),
        *_verdict_lines(r),
        f"next_chapter={r.next_chapter} RMSNorm rescales what enters each branch; "
        "the identity path bypasses it",
    ]
    return "\n".join(lines) + "\n"
