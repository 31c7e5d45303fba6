"""The bridge figure: one pre-norm decoder block of the course's model, as Graphviz DOT text.

Contract: ``decoder_block_dot(trace)`` draws, from the decoder lab's trace
(``residual-stream-v4``), one block top to bottom: the stream ``[B, T, d]`` (batch, tokens,
width, as the lab trained its model), a clean identity path, and two residual adds, one after
causal self-attention and one after the MLP, each branch opening with its own RMSNorm. Same
conventions as ``diagrams.dot``: solid identity, dashed learned branch, double-bordered add,
escaped labels, every number a traced value.
"""

from __future__ import annotations

from diagrams.dot import exact
from diagrams.dot_parts import close, edge, legend, node, opening, table
from tracefile import Trace

#: The trace this figure draws from.
TRACE = "residual-stream-v4"


def decoder_block_dot(trace: Trace) -> str:
    """x → RMSNorm → attention → + → RMSNorm → MLP → +, with the stream's shape."""
    batch, tokens = exact(trace, "TRAINING-CONFIG.batch"), exact(trace, "CORPUS.sequence-length")
    width, heads = exact(trace, "TRAINING-CONFIG.width"), exact(trace, "TRAINING-CONFIG.heads")
    hidden = exact(trace, "TRAINING-CONFIG.hidden")
    shape = f"[B, T, d] = [{batch}, {tokens}, {width}]"
    lines = opening("decoder_block", rankdir="TB")
    lines += legend()
    lines += [
        node("stream_in", table("Residual stream in", [shape]), "value"),
        node("norm_attn", table("RMSNorm", ["inside the branch"]), "learned",
             style="rounded,dashed"),
        node("attention", table("Causal self-attention", [f"{heads} heads, width {width}"]),
             "learned", style="rounded,dashed"),
        node("add_attn", "<B>+</B>", "merge", shape="circle", peripheries="2"),
        node("stream_mid", table("Residual stream", [shape]), "value"),
        node("norm_mlp", table("RMSNorm", ["inside the branch"]), "learned",
             style="rounded,dashed"),
        node("mlp", table("MLP", [f"width {width} → {hidden} → {width}"]), "learned",
             style="rounded,dashed"),
        node("add_mlp", "<B>+</B>", "merge", shape="circle", peripheries="2"),
        node("stream_out", table("Residual stream out", [shape]), "value"),
        edge("stream_in", "norm_attn", "learned"),
        edge("norm_attn", "attention", "learned"),
        edge("attention", "add_attn", "learned"),
        edge("stream_in", "add_attn", "identity"),
        edge("add_attn", "stream_mid", "merge"),
        edge("stream_mid", "norm_mlp", "learned"),
        edge("norm_mlp", "mlp", "learned"),
        edge("mlp", "add_mlp", "learned"),
        edge("stream_mid", "add_mlp", "identity"),
        edge("add_mlp", "stream_out", "merge"),
        "  stream_out -> legend [style=\"invis\", id=\"stream_out__legend__layout\"];",
    ]
    return close(lines)
