"""Tests for engine/tensor.py: leaves, snapshots, accumulation, retention, misuse errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.errors import EngineError, GradientError, OperandError, ShapeError
from engine.tensor import GraphRetention, TensorValue

RELEASED = (
    "backward: the graph behind this {op} result was released by an earlier backward "
    "(GraphRetention.RELEASE); pass GraphRetention.RETAIN to the first backward to walk it again"
)


def test_values_are_float64_read_only_copies():
    source = np.array([1, 2])
    x = TensorValue.parameter(source, name="x")
    source[0] = 99
    assert x.value.dtype == np.float64
    assert x.value.tolist() == [1.0, 2.0]
    assert x.shape == (2,) and x.name == "x"
    with pytest.raises(ValueError, match="read-only"):
        x.value[0] = 5.0
    snapshot = x.value_snapshot()
    snapshot[0] = 7.0
    assert x.value.tolist() == [1.0, 2.0]


def test_float32_stays_float32_through_ops_and_backward():
    w = TensorValue.parameter(np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32), name="w")
    x = TensorValue.constant(np.array([[1.0, 2.0]], dtype=np.float32))
    scale = np.float64(1.5)  # a float64 scalar widens a numpy float32 result; the tape narrows it
    y = (x @ w) * scale
    assert w.value.dtype == x.value.dtype == y.value.dtype == np.float32
    y.sum_axis(1).backward_with_seed(np.ones(1))
    assert w.gradient().dtype == np.float32
    np.testing.assert_array_equal(w.gradient(), np.array([[1.5, 1.5], [3.0, 3.0]], np.float32))
    w.set_value(np.zeros((2, 2)))  # float64 data, the parameter's precision kept
    assert w.value.dtype == np.float32


def test_one_float64_operand_makes_the_result_and_its_gradients_float64():
    a = TensorValue.parameter(np.ones(2, dtype=np.float32), name="a")
    b = TensorValue.parameter(np.ones(2), name="b")
    total = (a * b).sum_axis(0)
    assert total.value.dtype == np.float64
    total.backward()
    assert a.gradient().dtype == np.float32 and b.gradient().dtype == np.float64


def test_parameters_collect_gradients_and_constants_do_not():
    w = TensorValue.parameter([3.0, 4.0])
    c = TensorValue.constant([5.0, 6.0])
    assert w.gradient() is None and w.gradient_snapshot() is None
    (w * c).sum_axis(0).backward()
    assert w.gradient().tolist() == [5.0, 6.0]
    assert c.gradient() is None
    snapshot = w.gradient_snapshot()
    snapshot[0] = 0.0
    assert w.gradient().tolist() == [5.0, 6.0]
    with pytest.raises(ValueError, match="read-only"):
        w.gradient()[0] = 1.0
    w.zero_grad()
    assert w.gradient() is None


def test_interior_nodes_keep_no_gradient():
    x = TensorValue.parameter([1.0, 2.0])
    hidden = x * x
    hidden.sum_axis(0).backward()
    assert hidden.gradient() is None
    assert x.gradient().tolist() == [2.0, 4.0]


def test_same_leaf_on_both_operands_gets_both_contributions():
    x = TensorValue.parameter([1.0, -2.0])
    x.add(x).backward_with_seed([1.0, 3.0])
    assert x.gradient().tolist() == [2.0, 6.0]


def test_diamond_adds_both_branch_contributions():
    x = TensorValue.parameter([1.5, -2.0])
    left, right = x * 3.0, x * x
    top = left + right  # d/dx = 3 + 2x
    top.backward_with_seed([1.0, 1.0])
    assert x.gradient().tolist() == [3.0 + 2 * 1.5, 3.0 + 2 * -2.0]


def test_shared_interior_node_is_walked_once():
    x = TensorValue.parameter([2.0])
    shared = x * 5.0
    (shared + shared * shared).sum_axis(0).backward()  # d/dx = 5 + 2·(5x)·5
    assert x.gradient().tolist() == [5.0 + 2 * 10.0 * 5.0]


def test_retained_graph_adds_the_same_leaf_contribution_again():
    x = TensorValue.parameter([1.0, 2.0])
    w = TensorValue.parameter([[1.0, -1.0], [0.5, 2.0]])
    hidden = x @ w
    out = hidden + hidden * hidden
    out.backward_with_seed([1.0, 1.0], GraphRetention.RETAIN)
    first_x, first_w = x.gradient_snapshot(), w.gradient_snapshot()
    out.backward_with_seed([1.0, 1.0], GraphRetention.RETAIN)
    np.testing.assert_array_equal(x.gradient(), 2 * first_x)
    np.testing.assert_array_equal(w.gradient(), 2 * first_w)
    assert hidden.gradient() is None  # the interior never stored (so never doubled) a total


def test_release_is_the_default_and_a_second_backward_fails_clearly():
    x = TensorValue.parameter([1.0, 2.0])
    out = (x * x).sum_axis(0)
    out.backward()
    with pytest.raises(GradientError) as caught:
        out.backward()
    assert str(caught.value) == RELEASED.format(op="sum_axis")
    assert x.gradient().tolist() == [2.0, 4.0]  # the failed walk added nothing


@pytest.mark.parametrize("walk", ["backward", "backward_with_seed"])
@pytest.mark.parametrize("retention", ["release", "retain", None, True])
def test_retention_must_be_the_enum(walk, retention):
    # "release" used to be taken as RETAIN (only the enum member itself released the tape).
    x = TensorValue.parameter([1.0, 2.0])
    out = (x * x).sum_axis(0)
    args = (np.ones(()), retention) if walk == "backward_with_seed" else (retention,)
    with pytest.raises(TypeError, match=rf"^{walk}: retention must be GraphRetention\.RELEASE "
                       rf"or GraphRetention\.RETAIN, got {re.escape(repr(retention))}$"):
        getattr(out, walk)(*args)
    assert x.gradient() is None  # rejected before the walk touched anything
    out.backward(GraphRetention.RELEASE)
    assert x.gradient().tolist() == [2.0, 4.0]


def test_released_interior_node_blocks_a_walk_from_another_output():
    x = TensorValue.parameter([1.0])
    hidden = x * x
    hidden.backward_with_seed([1.0], GraphRetention.RELEASE)
    later = hidden + x
    with pytest.raises(GradientError, match=r"this mul result was released"):
        later.backward_with_seed([1.0])
    assert x.gradient().tolist() == [2.0]


def test_seed_shape_must_match_exactly():
    out = TensorValue.parameter([1.0, 2.0]) * 2.0
    with pytest.raises(GradientError) as caught:
        out.backward_with_seed([1.0, 1.0, 1.0])
    assert str(caught.value) == (
        "backward_with_seed: seed shape must equal the output shape: expected [2] got [3]"
    )
    with pytest.raises(GradientError, match=r"expected \[2\] got \[1,2\]$"):
        out.backward_with_seed([[1.0, 1.0]])  # broadcastable is still wrong


def test_backward_needs_a_one_element_output():
    out = TensorValue.parameter([1.0, 2.0]) * 2.0
    with pytest.raises(GradientError) as caught:
        out.backward()
    assert str(caught.value) == (
        "backward(): needs a one-element output, got shape [2]; "
        "use backward_with_seed(seed) for other shapes"
    )
    x = TensorValue.parameter([[3.0]])
    (x * x).backward()  # shape [1,1] has one element
    assert x.gradient().tolist() == [[6.0]]


def test_backward_from_a_constant_is_an_error():
    with pytest.raises(GradientError, match="does not depend on any parameter"):
        (TensorValue.constant([1.0]) * 2.0).backward()


def test_a_wrongly_shaped_op_gradient_is_reported():
    x = TensorValue.parameter([1.0, 2.0])
    bad = TensorValue.from_op("broken", x.value, (x,), lambda grad: (grad.sum(),))
    with pytest.raises(GradientError) as caught:
        bad.backward_with_seed([1.0, 1.0])
    assert str(caught.value) == (
        "broken backward: gradient shape must equal its input's shape: expected [2] got []"
    )


@pytest.mark.parametrize("retention", list(GraphRetention))
def test_ten_thousand_op_chain_needs_no_recursion(retention):
    x = TensorValue.parameter([1.0])
    out = x
    for _ in range(10_000):
        out = out + 1.0
    out.backward_with_seed([1.0], retention)
    assert x.gradient().tolist() == [1.0]
    assert out.value.tolist() == [10_001.0]


def test_parameters_lists_reachable_leaves_once():
    x = TensorValue.parameter([1.0], name="x")
    w = TensorValue.parameter([2.0], name="w")
    out = x * w + x + TensorValue.constant([1.0])
    assert [p.name for p in out.parameters()] == ["x", "w"]
    assert "name='x'" in repr(x)


def test_a_constant_has_no_parameters():
    assert TensorValue.constant([1.0]).parameters() == []


@pytest.mark.parametrize(
    ("data", "got"),
    [
        (None, "None"),
        ("2.0", "str '2.0'"),
        (np.array([1.0, None], dtype=object), "an array of dtype object"),
        ([[1.0], [2.0, 3.0]], "a list"),
        ([1j, 2.0], "an array of dtype complex128"),
    ],
)
def test_leaves_refuse_non_numeric_data(data, got):
    for make, kind in ((TensorValue.parameter, "parameter"), (TensorValue.constant, "constant")):
        with pytest.raises(OperandError) as caught:
            make(data)
        assert isinstance(caught.value, EngineError)
        assert str(caught.value) == (
            f"TensorValue.{kind}: operands must be real numbers or arrays of them: got {got}"
        )


def test_set_value_swaps_a_parameter_leafs_array():
    w = TensorValue.parameter([1.0, 2.0], name="w")
    old = w.value
    (w * w).sum_axis(0).backward()
    w.set_value(np.array([3, 4]))
    assert w.value.tolist() == [3.0, 4.0] and w.value.dtype == np.float64
    assert not w.value.flags.writeable
    assert old.tolist() == [1.0, 2.0]  # swapped, never written into
    assert w.gradient().tolist() == [2.0, 4.0]  # the gradient is kept


def test_set_value_refuses_other_values_and_shape_changes():
    w = TensorValue.parameter([1.0, 2.0], name="w")
    with pytest.raises(ShapeError) as caught:
        w.set_value([1.0])
    assert str(caught.value) == "set_value: the shape must not change: expected [2] got [1]"
    with pytest.raises(OperandError, match=r"^set_value: .* got None$"):
        w.set_value(None)
    for value in (TensorValue.constant([1.0]), w * 2.0):
        with pytest.raises(GradientError, match=r"^set_value: only a parameter leaf can be"):
            value.set_value([0.0, 0.0])


def test_an_op_result_is_adopted_read_only_unless_other_names_can_write_it():
    x = TensorValue.parameter([1.0, 2.0])
    fresh = np.array([3.0, 4.0])
    adopted = TensorValue.from_op("fresh", fresh, (x,), lambda grad: (grad,))
    assert adopted.value is fresh and not fresh.flags.writeable  # no copy
    view = TensorValue.from_op("view", x.value[::-1], (x,), lambda grad: (grad[::-1],))
    assert view.value.base is x.value  # a view of a read-only tape value stays a view
    writable = np.array([5.0, 6.0])
    copied = TensorValue.from_op("alias", writable[:], (x,), lambda grad: (grad,))
    writable[0] = 0.0  # the caller keeps a writable name: the tape holds a copy
    assert copied.value.tolist() == [5.0, 6.0]
    as_list = TensorValue.from_op("list", [1, 2], (x,), lambda grad: (grad,))
    assert as_list.value.dtype == np.float64 and not as_list.value.flags.writeable


def test_one_gradient_array_handed_to_two_parents_is_not_shared_afterwards():
    a, b = TensorValue.parameter([1.0]), TensorValue.parameter([2.0])
    total = a + b  # add hands the same upstream array to both operands
    out = total * a + b
    out.backward()
    assert a.gradient().tolist() == [4.0]  # d/da (a + b) a = 2a + b
    assert b.gradient().tolist() == [2.0]  # a + 1
