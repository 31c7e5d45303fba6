"""Differentiable operations on `TensorValue`, each with its backward beside its forward.

Every op checks its operands first: non-numeric data raises `OperandError`, bad integer
indices `IndicesError`, and shapes it cannot combine `ShapeError`, each naming the op. It
then computes the float64 forward value with numpy and hands `TensorValue.from_op` a backward
closure that returns exactly one gradient per input, each with that input's shape. Gradients
of broadcasting ops are summed back by `unbroadcast`, the one place that undoes broadcasting.

Modules by job: `elementary` (arithmetic, `matmul`, reductions); `pointwise`
(`relu`, `tanh`, `gelu`, `exp`, `log`, `sqrt`, `div`); `shape` (`reshape`, `transpose`,
`swap_last_axes`); `norms` (fused `rms_norm`, `layer_norm` over the last axis);
`softmax` (`softmax`, `log_softmax`, fused `cross_entropy`); `embedding` (`embedding`,
`causal_mask`); `attention` (fused causal `attention_probabilities`); shared helpers in
`_common`.
"""

from engine.ops._common import unbroadcast
from engine.ops.attention import attention_probabilities
from engine.ops.elementary import add, matmul, mean, mul, neg, scale, sub, sum_axis
from engine.ops.embedding import causal_mask, embedding
from engine.ops.norms import layer_norm, rms_norm
from engine.ops.pointwise import div, exp, gelu, log, relu, sqrt, tanh
from engine.ops.shape import reshape, swap_last_axes, transpose
from engine.ops.softmax import cross_entropy, log_softmax, softmax

__all__ = [
    "add",
    "attention_probabilities",
    "causal_mask",
    "cross_entropy",
    "div",
    "embedding",
    "exp",
    "gelu",
    "layer_norm",
    "log",
    "log_softmax",
    "matmul",
    "mean",
    "mul",
    "neg",
    "relu",
    "reshape",
    "rms_norm",
    "scale",
    "softmax",
    "sqrt",
    "sub",
    "sum_axis",
    "swap_last_axes",
    "tanh",
    "transpose",
    "unbroadcast",
]
