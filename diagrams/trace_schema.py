"""Typed records of trace v1 and the schema the parser checks them against.

Contract: one frozen dataclass per record kind of docs/trace.md ("Records"), with the grammar's
keys as fields (``-`` becomes ``_``); ``Trace`` aggregates them. ``RECORDS`` is the grammar's
record table as data — order, keys, value types, keyed-ness and the vector-length rules — so
the parser (diagrams/trace.py) and path resolution (diagrams/trace_paths.py) share one copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VERSION = "residual-connections-v1"
HEADER = f"TRACE {VERSION} BEGIN"
FOOTER = f"TRACE {VERSION} END"

Vector = tuple[float, ...]
Shape = tuple[int, ...]
Names = tuple[str, ...]


@dataclass(frozen=True)
class Config:
    name: str
    chapter: int
    next_chapter: int
    shape: Shape
    branch_parameter: str
    weight_shape: Shape
    weight: Vector


@dataclass(frozen=True)
class Forward:
    input: Vector
    branch: Vector
    output: Vector


@dataclass(frozen=True)
class Backward:
    upstream: Vector
    identity: Vector
    branch: Vector
    input: Vector


@dataclass(frozen=True)
class Parameter:
    name: str
    shape: Shape
    gradient: Vector


@dataclass(frozen=True)
class ZeroBranch:
    name: str
    output: Vector
    input_gradient: Vector
    weight_gradient: Vector
    weight_gradient_nonzero: bool


@dataclass(frozen=True)
class ShapeError:
    identity: Shape
    branch: Shape
    broadcastable: bool
    rejected: bool


@dataclass(frozen=True)
class SharedOperand:
    upstream: Vector
    gradient: Vector


@dataclass(frozen=True)
class Scaled:
    alpha: float
    output: Vector


@dataclass(frozen=True)
class StackConfig:
    layers: int
    branch_factor: float
    residual_factor: float


@dataclass(frozen=True)
class Stack:
    depth: int
    plain: Vector
    residual: Vector


@dataclass(frozen=True)
class StackGradient:
    plain: Vector
    residual: Vector
    plain_parameters: Names
    residual_parameters: Names
    parameters_finite_nonzero: bool


@dataclass(frozen=True)
class Retention:
    depth: int
    plain: float
    residual: float


@dataclass(frozen=True)
class Gradcheck:
    input_checks: int
    weight_checks: int
    step: float
    tolerance: float
    max_error: float
    passed: bool


@dataclass(frozen=True)
class Proof:
    identity: str
    gradient: str
    parameters: str
    broadcast: str


@dataclass(frozen=True)
class Replay:
    bitwise: bool


@dataclass(frozen=True)
class RecordSpec:
    """One row of the grammar's record table.

    ``keys`` pairs each key with its value type; ``lengths`` maps a vector key to the shape its
    length must equal: a key of the same record (``"shape"``) or ``"RECORD.key"`` of an earlier
    record. ``keyed_by`` names the key of a keyed record (``None`` for ``once`` records).
    """

    kind: str
    attr: str
    cls: type
    keys: tuple[tuple[str, str], ...]
    keyed_by: str | None = None
    lengths: tuple[tuple[str, str], ...] = ()

    def key_names(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.keys)


_X = "CONFIG.shape"
_W = "CONFIG.weight-shape"

RECORDS: tuple[RecordSpec, ...] = (
    RecordSpec("CONFIG", "config", Config, (
        ("name", "word"), ("chapter", "int"), ("next-chapter", "int"), ("shape", "shape"),
        ("branch-parameter", "name"), ("weight-shape", "shape"), ("weight", "vector"),
    ), lengths=(("weight", "weight-shape"),)),
    RecordSpec("FORWARD", "forward", Forward, (
        ("input", "vector"), ("branch", "vector"), ("output", "vector"),
    ), lengths=(("input", _X), ("branch", _X), ("output", _X))),
    RecordSpec("BACKWARD", "backward", Backward, (
        ("upstream", "vector"), ("identity", "vector"), ("branch", "vector"), ("input", "vector"),
    ), lengths=(("upstream", _X), ("identity", _X), ("branch", _X), ("input", _X))),
    RecordSpec("PARAMETER", "parameter", Parameter, (
        ("name", "name"), ("shape", "shape"), ("gradient", "vector"),
    ), lengths=(("gradient", "shape"),)),
    RecordSpec("ZERO-BRANCH", "zero_branch", ZeroBranch, (
        ("name", "name"), ("output", "vector"), ("input-gradient", "vector"),
        ("weight-gradient", "vector"), ("weight-gradient-nonzero", "bool"),
    ), lengths=(("output", _X), ("input-gradient", _X), ("weight-gradient", _W))),
    RecordSpec("SHAPE-ERROR", "shape_error", ShapeError, (
        ("identity", "shape"), ("branch", "shape"), ("broadcastable", "bool"),
        ("rejected", "bool"),
    )),
    RecordSpec("SHARED-OPERAND", "shared_operand", SharedOperand, (
        ("upstream", "vector"), ("gradient", "vector"),
    ), lengths=(("upstream", _X), ("gradient", _X))),
    RecordSpec("SCALED", "scaled", Scaled, (
        ("alpha", "float"), ("output", "vector"),
    ), keyed_by="alpha", lengths=(("output", _X),)),
    RecordSpec("STACK-CONFIG", "stack_config", StackConfig, (
        ("layers", "int"), ("branch-factor", "float"), ("residual-factor", "float"),
    )),
    RecordSpec("STACK", "stack", Stack, (
        ("depth", "int"), ("plain", "vector"), ("residual", "vector"),
    ), keyed_by="depth", lengths=(("plain", _X), ("residual", _X))),
    RecordSpec("STACK-GRADIENT", "stack_gradient", StackGradient, (
        ("plain", "vector"), ("residual", "vector"), ("plain-parameters", "names"),
        ("residual-parameters", "names"), ("parameters-finite-nonzero", "bool"),
    ), lengths=(("plain", _X), ("residual", _X))),
    RecordSpec("RETENTION", "retention", Retention, (
        ("depth", "int"), ("plain", "float"), ("residual", "float"),
    )),
    RecordSpec("GRADCHECK", "gradcheck", Gradcheck, (
        ("input-checks", "int"), ("weight-checks", "int"), ("step", "float"),
        ("tolerance", "float"), ("max-error", "float"), ("passed", "bool"),
    )),
    RecordSpec("PROOF", "proof", Proof, (
        ("identity", "word"), ("gradient", "word"), ("parameters", "word"),
        ("broadcast", "word"),
    )),
    RecordSpec("REPLAY", "replay", Replay, (("bitwise", "bool"),)),
)

SPECS: dict[str, RecordSpec] = {spec.kind: spec for spec in RECORDS}


def field_name(key: str) -> str:
    """The dataclass field for a grammar key (``next-chapter`` → ``next_chapter``)."""
    return key.replace("-", "_")


@dataclass(frozen=True)
class Trace:
    """A parsed trace v1: one attribute per record, keyed records as tuples in key order.

    ``stack[k]`` is the record of depth ``k`` (depths are contiguous from 0), ``scaled`` is in
    increasing ``alpha``. ``text`` is the original text and ``path`` where it came from.
    """

    config: Config
    forward: Forward
    backward: Backward
    parameter: Parameter
    zero_branch: ZeroBranch
    shape_error: ShapeError
    shared_operand: SharedOperand
    scaled: tuple[Scaled, ...]
    stack_config: StackConfig
    stack: tuple[Stack, ...]
    stack_gradient: StackGradient
    retention: Retention
    gradcheck: Gradcheck
    proof: Proof
    replay: Replay
    text: str
    path: str

    def resolve(self, path: str) -> Any:
        """The typed value a value path names (docs/trace.md, "Addressing a value").

        Raises ``TracePathError`` naming the path and the records/keys that do exist.
        """
        # Imported here: trace_paths needs RECORDS from this module.
        from diagrams.trace_paths import resolve

        return resolve(self, path)
