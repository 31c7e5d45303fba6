"""Tests for engine/worked_example: every Chapter 24 figure, asserted exactly (binary fractions)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from paths import ROOT

from engine.worked_example import (
    bit_pattern,
    branch_probe,
    chapter_results,
    gradcheck_fixture,
    identity_probe,
    primary_fixture,
    proof_words,
    run_fixtures,
    scaled_fixture,
    shape_check_fixture,
    shared_operand_fixture,
    stack_fixture,
    zero_branch_fixture,
)


def test_primary_fixture_figures():
    p = primary_fixture()
    assert (p.input_shape, p.input) == ((2,), (2.0, -1.0))
    assert p.branch_parameter == "residual.branch.weight"
    assert (p.weight_shape, p.weight) == ((2, 2), (0.5, -1.0, 2.0, 0.25))
    assert p.branch_output == (-1.0, -2.25)
    assert (p.output_shape, p.output) == ((2,), (1.0, -3.25))
    assert p.upstream == (1.0, 1.0)
    assert p.identity_gradient == (1.0, 1.0)
    assert p.branch_gradient == (-0.5, 2.25)
    assert p.input_gradient == (0.5, 3.25)
    assert (p.weight_gradient_shape, p.weight_gradient) == ((2, 2), (2.0, 2.0, -1.0, -1.0))
    assert p.merge_parameter_count == 0


def test_probes_measure_one_path_each():
    assert identity_probe() == (1.0, 1.0)
    assert branch_probe() == (-0.5, 2.25)


def test_zero_branch_figures():
    z = zero_branch_fixture()
    assert z.parameter == "residual.zero.weight"
    assert z.output == (2.0, -1.0)
    assert z.input_gradient == (1.0, 1.0)
    assert z.weight_gradient == (2.0, 2.0, -1.0, -1.0)
    assert z.weight_gradient_nonzero is True


def test_shape_check_figures():
    s = shape_check_fixture()
    assert (s.identity_shape, s.branch_shape) == ((2, 2), (2,))
    assert s.broadcastable is True and s.broadcast_shape == (2, 2)
    assert s.rejected is True
    assert s.message.endswith("identity [2,2] vs branch [2]")


def test_shared_operand_receives_twice_the_upstream():
    s = shared_operand_fixture()
    assert (s.upstream, s.gradient) == ((1.0, 1.0), (2.0, 2.0))


def test_scaled_outputs():
    assert [(s.alpha, s.output) for s in scaled_fixture()] == [
        (0.0, (2.0, -1.0)),
        (0.5, (1.5, -2.125)),
        (1.0, (1.0, -3.25)),
    ]


@pytest.mark.parametrize(("use_residual", "factor"), [(False, -0.25), (True, 0.75)])
def test_stack_values_are_powers_of_the_layer_factor(use_residual, factor):
    stack = stack_fixture(use_residual)
    kind = "residual" if use_residual else "plain"
    assert stack.kind == kind
    assert stack.values == tuple((2.0 * factor**k, -1.0 * factor**k) for k in range(5))
    assert stack.input_gradient == (factor**4, factor**4)
    assert stack.parameter_names == tuple(f"{kind}.stack.{d}.branch.weight" for d in range(4))
    assert stack.parameters_finite_nonzero is True


def test_stack_depth_four_figures():
    plain, residual = stack_fixture(False), stack_fixture(True)
    assert plain.values[4] == (0.0078125, -0.00390625)
    assert residual.values[4] == (0.6328125, -0.31640625)
    assert plain.input_gradient == (0.00390625, 0.00390625)
    assert residual.input_gradient == (0.31640625, 0.31640625)


def test_gradcheck_fixture():
    g = gradcheck_fixture()
    assert (g.input_checks, g.weight_checks) == (2, 4)
    assert (g.step, g.tolerance) == (1e-06, 2e-06)
    assert g.passed is True
    assert 0.0 < g.max_error <= 2e-06
    assert [c.analytic for c in g.input_check.checks] == [9.5, -4.125]
    assert [c.analytic for c in g.weight_check.checks] == [4.0, -13.0, -2.0, 6.5]


def test_chapter_results_derived_facts():
    r = chapter_results()
    assert (r.name, r.chapter, r.next_chapter) == ("known-residual-linear", 24, 25)
    assert dataclasses.astuple(r.stack_config) == (4, -0.25, 0.75)
    assert dataclasses.astuple(r.retention) == (4, 0.00390625, 0.31640625)
    assert dataclasses.astuple(r.proof) == ("exact", "added", "branch-owned", "forbidden")
    assert r.replay_bitwise is True


def test_proof_words_change_when_a_property_fails():
    run = run_fixtures()
    broken = dataclasses.replace(
        run,
        primary=dataclasses.replace(
            run.primary, input_gradient=(0.5, 3.0), merge_parameter_count=1
        ),
        zero_branch=dataclasses.replace(run.zero_branch, output=(2.0, -0.5)),
        shape_check=dataclasses.replace(run.shape_check, rejected=False),
    )
    assert dataclasses.astuple(proof_words(broken)) == (
        "inexact", "not-added", "merge-owned", "allowed"
    )


def test_bit_pattern_tells_apart_what_float_equality_does_not():
    assert bit_pattern((0.0,)) != bit_pattern((-0.0,))
    nan = float("nan")
    assert bit_pattern((nan,)) == bit_pattern((nan,))
    assert bit_pattern(run_fixtures()) == bit_pattern(run_fixtures())


SECTIONS = {
    "engine/nn/residual.py": ["residual-add"],
    "engine/ops/_common.py": ["unbroadcast"],
    "engine/ops/elementary.py": ["add-op"],
    "engine/tensor.py": ["backward"],
    "engine/worked_example/merge.py": ["residual-fixture", "zero-branch"],
    "engine/worked_example/stack.py": ["residual-stack"],
    "engine/worked_example/numeric.py": ["residual-gradcheck"],
}


@pytest.mark.parametrize(("path", "names"), SECTIONS.items())
def test_snippet_sections_are_present_and_paired(path, names):
    text = (ROOT / path).read_text(encoding="utf-8")
    found = re.findall(r"^# --8<-- \[(start|end):([a-z-]+)\]$", text, flags=re.MULTILINE)
    assert found == [(edge, name) for name in names for edge in ("start", "end")]


def test_numeric_objective_agrees_with_matmul_at_the_fixture_point():
    import numpy as np

    from engine.worked_example import squared_residual_objective

    x, w = np.array([2.0, -1.0]), np.array([[0.5, -1.0], [2.0, 0.25]])
    assert squared_residual_objective(x, w) == float(np.sum((x + x @ w) ** 2)) == 11.5625
