"""Exception types raised by the engine.

Contract: every error the engine raises on purpose derives from `EngineError`, and its
message names the operation and states what was expected and what was received, so a
one-line report on stderr is enough to find the mistake. Shapes are written the way the
trace writes them: ``[2,2]``, ``[2]``, ``[]`` for a scalar.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracefile.values import is_int, write_value

Shape = tuple[int, ...]


def format_shape(shape: Sequence[int]) -> str:
    """Write a shape as the trace does, ``[d0,d1,...]`` (``[]`` for a zero-dimensional value,
    which a trace, whose shapes are never empty, cannot hold)."""
    return write_value("shape", shape) if len(shape) else "[]"


class EngineError(Exception):
    """Base class of every deliberate engine error."""


class ShapeError(EngineError):
    """An operation received operand shapes it cannot combine."""

    def __init__(
        self,
        op: str,
        left: Sequence[int],
        right: Sequence[int] | None,
        reason: str,
        labels: tuple[str, str] = ("got", "and"),
    ) -> None:
        self.op = op
        self.left: Shape = tuple(int(size) for size in left)
        self.right: Shape | None = None if right is None else tuple(int(s) for s in right)
        shapes = f"{labels[0]} {format_shape(self.left)}"
        if self.right is not None:
            shapes += f" {labels[1]} {format_shape(self.right)}"
        super().__init__(f"{op}: {reason}: {shapes}")


class ResidualShapeError(ShapeError):
    """A residual merge whose identity and branch shapes differ (broadcasting is refused)."""

    def __init__(self, identity: Sequence[int], branch: Sequence[int]) -> None:
        super().__init__(
            "residual_add",
            identity,
            branch,
            "the branch must return the identity's exact shape (a residual merge never "
            "broadcasts)",
            labels=("identity", "vs branch"),
        )
        self.identity: Shape = self.left
        self.branch: Shape = self.right if self.right is not None else ()


class GradientError(EngineError):
    """Backward was called in a way the tape cannot honour (seed shape, released graph...)."""


class GradcheckError(EngineError):
    """A numerical gradient check was misconfigured or found a mismatch."""


class OperandError(EngineError):
    """An operand is not numeric data: None, text, objects, complex numbers, ragged lists."""

    def __init__(self, op: str, got: str) -> None:
        self.op = op
        super().__init__(f"{op}: operands must be real numbers or arrays of them: got {got}")


class IndicesError(EngineError):
    """Integer indices (class targets, table rows) that are not integers or out of range."""


class ConfigError(EngineError):
    """A builder, initializer or optimizer received a setting it cannot use."""


class NumericsError(EngineError):
    """The kernels cannot be pinned as asked (numpy already loaded, an unknown mode)."""


def check_int(owner: str, label: str, value: object, low: int = 0,
              high: int | None = None) -> None:
    """Raise `ConfigError` unless ``value`` is an int in ``[low, high]`` (no upper end when
    ``high`` is None), saying so in the words a reader expects."""
    if is_int(value) and low <= value and (high is None or value <= high):  # type: ignore[operator]
        return
    wanted = (f"an int in [{low}, {high}]" if high is not None
              else "a positive int" if low == 1 else f"an int >= {low}")
    raise ConfigError(f"{owner}: {label} must be {wanted}, got {value!r}")
