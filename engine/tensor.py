"""Reverse-mode tape: `TensorValue`, `GraphRetention` and the backward walk.

Contract:
- A `TensorValue` holds a read-only numpy value in one of two precisions: float32 when it
  was given float32, float64 otherwise (every other real kind converts to float64). An op's
  result, and every gradient flowing back to a value, has the precision of its tensor
  operands: float32 only when all of them are (a float32 model stays float32 end to end).
  Leaves are either parameters (`TensorValue.parameter`, they collect gradients) or
  constants (they collect none). Only `set_value` changes a value, only a parameter
  leaf's, only by swapping arrays, and never its precision.
- Every op result keeps tape edges to its parents plus the backward closure written beside
  its forward code (see `engine/ops/`); the closure returns one gradient per parent.
- `backward_with_seed(seed, retention)` walks the tape once, in an iterative topological
  order (no recursion, so a chain of 10,000 ops is fine). Gradients always accumulate with
  ``+=``: an input used twice receives both contributions.
- Interior gradients are temporaries of one walk; only parameter leaves keep a gradient.
  So a second walk over a retained graph adds the same contribution to the leaves again
  and never double counts an interior node.
- `GraphRetention.RELEASE` (the default) frees the tape after the walk; a later walk
  through a released node raises `GradientError` before touching any gradient.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from engine.errors import GradientError, Shape, ShapeError, format_shape
from engine.operands import numeric_array

BackwardFn = Callable[[np.ndarray], tuple[np.ndarray | None, ...]]


class GraphRetention(enum.Enum):
    """What backward does with the tape once it has walked it."""

    RELEASE = "release"
    RETAIN = "retain"


def precision_of(data: np.ndarray) -> type[np.floating]:
    """The tape's precision for an array: float32 stays float32, anything else is float64."""
    return np.float32 if data.dtype == np.float32 else np.float64


def as_tape_array(data: Any, op: str = "TensorValue",
                  precision: type[np.floating] | None = None) -> np.ndarray:
    """A fresh, read-only copy of ``data`` in ``precision`` (None: `precision_of` the data),
    so the tape can never be mutated."""
    array = numeric_array(data, op)
    array = np.array(array, dtype=precision or precision_of(array), copy=True)
    array.flags.writeable = False
    return array


def _adopt(value: Any, op: str, precision: type[np.floating]) -> np.ndarray:
    """``value`` itself, read-only, if it has the op's precision and nothing else can write
    to its memory; else a copy in that precision.

    Every op result passes through here, so it avoids copying: an array that owns its data
    is new (the op just computed it), and a view whose memory belongs to a read-only array
    (a reshape or transpose of a tape value) cannot be written through any other name. A
    float32 op that numpy widened (a float64 scalar in its formula) is narrowed back here.
    """
    if type(value) is np.ndarray and value.dtype == precision:
        base = value.base
        if value.flags.owndata or (isinstance(base, np.ndarray) and not base.flags.writeable):
            value.flags.writeable = False
            return value
    return as_tape_array(value, op, precision)


def _operands_precision(parents: tuple[TensorValue, ...]) -> type[np.floating]:
    """float32 when every tensor operand is float32, float64 otherwise."""
    if parents and all(parent._value.dtype == np.float32 for parent in parents):
        return np.float32
    return np.float64


class TensorValue:
    """A float64 or float32 value on the tape, with an optional accumulated gradient."""

    __slots__ = (
        "_backward", "_grad", "_op", "_parents", "_released", "_value", "name", "requires_grad"
    )

    def __init__(self, data: Any, *, name: str | None = None, requires_grad: bool = False):
        kind = "parameter" if requires_grad else "constant"
        self._value = as_tape_array(data, f"TensorValue.{kind}")
        self._grad: np.ndarray | None = None
        self._parents: tuple[TensorValue, ...] = ()
        self._backward: BackwardFn | None = None
        self._op = "parameter" if requires_grad else "constant"
        self._released = False
        self.name = name
        self.requires_grad = requires_grad

    @classmethod
    def parameter(cls, data: Any, name: str | None = None) -> TensorValue:
        """A leaf that collects gradients."""
        return cls(data, name=name, requires_grad=True)

    @classmethod
    def constant(cls, data: Any, name: str | None = None) -> TensorValue:
        """A leaf that collects no gradient."""
        return cls(data, name=name, requires_grad=False)

    @classmethod
    def from_op(
        cls,
        op: str,
        value: np.ndarray,
        parents: tuple[TensorValue, ...],
        backward: BackwardFn,
    ) -> TensorValue:
        """An op result; it keeps tape edges only if some parent needs a gradient.

        The op hands ``value`` over: a fresh array of its operands' precision (or a view of a
        read-only one) is made read-only and kept as it is; anything else is copied first.
        """
        result = cls.__new__(cls)
        result._value = _adopt(value, op, _operands_precision(parents))
        result._grad = None
        result._parents = ()
        result._backward = None
        result._released = False
        result.name = None
        result.requires_grad = False
        result._op = op
        if any(parent.requires_grad for parent in parents):
            result.requires_grad = True
            result._parents = parents
            result._backward = backward
        return result

    # -- inspection -------------------------------------------------------------------

    @property
    def shape(self) -> Shape:
        return tuple(self._value.shape)

    @property
    def value(self) -> np.ndarray:
        """The value itself (read-only); use `value_snapshot` for a private copy."""
        return self._value

    @property
    def op(self) -> str:
        return self._op

    @property
    def parents(self) -> tuple[TensorValue, ...]:
        """The op's tensor operands (empty for a leaf, for a result no gradient flows through,
        and once backward released the tape)."""
        return self._parents

    @property
    def is_leaf(self) -> bool:
        return self._backward is None and not self._released

    def value_snapshot(self) -> np.ndarray:
        return self._value.copy()

    def gradient(self) -> np.ndarray | None:
        """The accumulated gradient as a read-only view, or None if none arrived yet."""
        if self._grad is None:
            return None
        view = self._grad.view()
        view.flags.writeable = False
        return view

    def gradient_snapshot(self) -> np.ndarray | None:
        return None if self._grad is None else self._grad.copy()

    def zero_grad(self) -> None:
        self._grad = None

    def set_value(self, data: Any) -> None:
        """Give a parameter leaf a new value of the same shape (how optimizers update).

        The old array is replaced, never written to: closures of results computed before
        captured it and keep describing that forward, so run a new forward after an update.
        The accumulated gradient is kept, and so is the precision (``data`` is converted).
        """
        if self._op != "parameter" or not self.is_leaf:
            raise GradientError(f"set_value: only a parameter leaf can be updated, got {self!r}")
        value = as_tape_array(data, "set_value", self._value.dtype.type)
        if value.shape != self.shape:
            raise ShapeError("set_value", self.shape, value.shape, "the shape must not change",
                             labels=("expected", "got"))
        self._value = value

    def parameters(self) -> list[TensorValue]:
        """Parameter leaves reachable from this value, in a deterministic order."""
        return [node for node in _topological_order(self) if node.is_leaf and node.requires_grad]

    def __repr__(self) -> str:
        label = f" name={self.name!r}" if self.name else ""
        return f"TensorValue(op={self._op}{label} shape={format_shape(self.shape)})"

    # -- operators (implemented in engine/ops/) ---------------------------------------

    def add(self, other: Any) -> TensorValue:
        return ops.add(self, other)

    def sub(self, other: Any) -> TensorValue:
        return ops.sub(self, other)

    def mul(self, other: Any) -> TensorValue:
        return ops.mul(self, other)

    def matmul(self, other: Any) -> TensorValue:
        return ops.matmul(self, other)

    def scale(self, factor: float) -> TensorValue:
        return ops.scale(self, factor)

    def neg(self) -> TensorValue:
        return ops.neg(self)

    def sum_axis(self, axis: int, keepdims: bool = False) -> TensorValue:
        return ops.sum_axis(self, axis, keepdims)

    def mean(self, axis: int | None = None, keepdims: bool = False) -> TensorValue:
        return ops.mean(self, axis, keepdims)

    def __add__(self, other: Any) -> TensorValue:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> TensorValue:
        return ops.add(other, self)

    def __sub__(self, other: Any) -> TensorValue:
        return ops.sub(self, other)

    def __rsub__(self, other: Any) -> TensorValue:
        return ops.sub(other, self)

    def __mul__(self, other: Any) -> TensorValue:
        return ops.mul(self, other)

    def __rmul__(self, other: Any) -> TensorValue:
        return ops.mul(other, self)

    def __matmul__(self, other: Any) -> TensorValue:
        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> TensorValue:
        return ops.matmul(other, self)

    def __neg__(self) -> TensorValue:
        return ops.neg(self)

    def __truediv__(self, other: Any) -> TensorValue:
        return ops.div(self, other)

    def __rtruediv__(self, other: Any) -> TensorValue:
        return ops.div(other, self)

    # -- backward ---------------------------------------------------------------------

    def backward(self, retention: GraphRetention = GraphRetention.RELEASE) -> None:
        """Backward from a one-element output, seeded with 1."""
        _check_retention(retention, "backward")
        if self._value.size != 1:
            raise GradientError(
                f"backward(): needs a one-element output, got shape {format_shape(self.shape)}; "
                "use backward_with_seed(seed) for other shapes"
            )
        self.backward_with_seed(np.ones(self.shape), retention)

    def backward_with_seed(
        self, seed: Any, retention: GraphRetention = GraphRetention.RELEASE
    ) -> None:
        """Push ``seed`` (the upstream gradient, same shape as self) back to the leaves."""
        _check_retention(retention, "backward_with_seed")
        backward_walk(self, seed, retention)

    def _release(self) -> None:
        if not self.is_leaf:
            self._parents, self._backward, self._released = (), None, True


def _check_retention(retention: object, caller: str) -> None:
    # A plain string such as "release" would otherwise silently retain the tape.
    if not isinstance(retention, GraphRetention):
        raise TypeError(
            f"{caller}: retention must be GraphRetention.RELEASE or GraphRetention.RETAIN, "
            f"got {retention!r}"
        )


# --8<-- [start:backward]
def backward_walk(root: TensorValue, seed: Any, retention: GraphRetention) -> None:
    """Reverse mode: hand every node's gradient to its parents, children before parents."""
    seed = np.asarray(seed, dtype=root.value.dtype)
    if seed.shape != root.shape:
        raise GradientError(
            "backward_with_seed: seed shape must equal the output shape: "
            f"expected {format_shape(root.shape)} got {format_shape(seed.shape)}"
        )
    if not root.requires_grad:
        raise GradientError("backward: this value does not depend on any parameter")
    order = _topological_order(root)  # parents before children
    pending: dict[int, np.ndarray] = {id(root): seed.copy()}
    for node in reversed(order):
        upstream = pending.pop(id(node), None)  # interior gradients live for one walk
        if upstream is None:
            continue
        if node.is_leaf:
            if node._grad is None:
                node._grad = np.zeros(node.shape, node._value.dtype)
            node._grad += upstream  # accumulate across edges and across walks
            continue
        for parent, grad in zip(node._parents, node._backward(upstream), strict=True):
            if grad is not None and parent.requires_grad:
                _accumulate(pending, node, parent, grad)
    if retention is GraphRetention.RELEASE:
        for node in order:
            node._release()


def _accumulate(
    pending: dict[int, np.ndarray], child: TensorValue, parent: TensorValue, grad: np.ndarray
) -> None:
    """Add one edge's gradient to the parent's running total for this walk.

    Totals are never written in place: a backward may hand the same array to several
    parents (``add`` passes its upstream gradient to both), so a second edge makes a new sum
    instead of adding into an array another node may hold.
    """
    if np.shape(grad) != parent.shape:
        raise GradientError(
            f"{child.op} backward: gradient shape must equal its input's shape: "
            f"expected {format_shape(parent.shape)} got {format_shape(np.shape(grad))}"
        )
    key = id(parent)
    if type(grad) is not np.ndarray or grad.dtype != parent._value.dtype:
        grad = np.asarray(grad, dtype=parent._value.dtype)  # a gradient has its value's precision
    if key in pending:
        pending[key] = pending[key] + grad  # a second edge into the same node adds
    else:
        pending[key] = grad
# --8<-- [end:backward]


def _walk_parents(node: TensorValue) -> Iterator[TensorValue]:
    if node._released:
        raise GradientError(
            f"backward: the graph behind this {node.op} result was released by an earlier "
            "backward (GraphRetention.RELEASE); pass GraphRetention.RETAIN to the first "
            "backward to walk it again"
        )
    return (parent for parent in node._parents if parent.requires_grad)


def _topological_order(root: TensorValue) -> list[TensorValue]:
    """Nodes that need a gradient, every parent before its children (explicit stack)."""
    order: list[TensorValue] = []
    seen: set[int] = {id(root)}
    stack: list[tuple[TensorValue, Iterator[TensorValue]]] = [(root, _walk_parents(root))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append((parent, _walk_parents(parent)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def tape_nodes(root: TensorValue) -> list[TensorValue]:
    """Every node a backward from ``root`` would visit (parameters included), parents first:
    what the tape holds alive for that backward."""
    return _topological_order(root)


def saved_arrays(node: TensorValue) -> list[np.ndarray]:
    """The arrays ``node``'s backward closure captured from its forward (empty for a leaf)."""
    cells = getattr(node._backward, "__closure__", None) or ()
    return [cell.cell_contents for cell in cells if isinstance(cell.cell_contents, np.ndarray)]


# Imported last: ops builds TensorValue results, and the operators above delegate to it.
from engine import ops  # noqa: E402
