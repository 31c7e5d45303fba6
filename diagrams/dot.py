"""Graphviz DOT text of the chapter's four diagrams, built only from a parsed trace.

Contract: ``forward_dot``, ``backward_dot``, ``checks_dot`` and ``stack_dot`` are pure functions
of a ``Trace`` returning deterministic DOT text (golden-tested in tests/golden/dot/). Every value
in a label is a traced value formatted by diagrams.format (exact in the split/merge and check
diagrams, whose labels must stay short; fixed6 in the stack, whose columns line up), and every
label is an HTML-like label whose text is escaped, so hostile names cannot break the DOT or
the SVG.
Meaning is carried by line style and border, never by colour: solid = identity path,
dashed = learned branch, double border = merge. No colours are set (graphviz's default black
is turned into ``currentColor`` by diagrams.svg), fills stay transparent, and every node and
edge has an explicit id and a ``class`` for the site's CSS. Static text holds no digits, so
each number in a diagram comes from the trace.
"""

from __future__ import annotations

from itertools import pairwise

from diagrams.dot_parts import (
    close,
    edge,
    heading,
    legend,
    node,
    opening,
    row,
    table,
)
from diagrams.format import format_value
from tracefile import Trace

__all__ = ["backward_dot", "checks_dot", "forward_dot", "stack_dot"]


def vx(trace: Trace, path: str) -> str:
    """The exact display of a traced value: short labels keep the split/merge diagrams legible
    at page width (escaping happens when the label is built)."""
    return format_value(trace.resolve(path), "exact")


def v6(trace: Trace, path: str) -> str:
    """The fixed6 display of a traced value: the stack's columns line up digit by digit."""
    return format_value(trace.resolve(path), "fixed6")


Card = tuple[str, ...]


def _split_merge(name: str, source: Card, identity: Card, branch: Card, result: Card) -> str:
    """The shared shape of the forward and backward diagrams: split, two paths, add, result.

    Each argument is (heading, line, ...); the identity path is solid, the branch dashed, the
    add node double-bordered, and the legend sits beside the result.
    """
    lines = opening(name)
    # Declared first, the legend lands below the result in the result's rank.
    lines += legend("  { rank=same; result; legend; }")
    lines += [
        node("source", table(source[0], list(source[1:])), "value"),
        node("identity", table(identity[0], list(identity[1:])), "identity"),
        node("branch", table(branch[0], list(branch[1:])), "learned", style="rounded,dashed"),
        node("add", "<B>+</B>", "merge", shape="circle", peripheries="2"),
        node("result", table(result[0], list(result[1:])), "value"),
        edge("source", "identity", "identity"),
        edge("source", "branch", "learned"),
        edge("identity", "add", "identity"),
        edge("branch", "add", "learned"),
        edge("add", "result", "merge"),
    ]
    return close(lines)


def forward_dot(trace: Trace) -> str:
    """x splits into the identity path and the learned branch F(x); they add to give y."""
    x = vx(trace, "FORWARD.input")
    return _split_merge(
        "forward",
        ("Input", f"x = {x}"),
        ("Identity path", f"x = {x}"),
        ("Learned branch", f"F(x) = {vx(trace, 'FORWARD.branch')}"),
        ("Residual output", "y = x + F(x)", f"y = {vx(trace, 'FORWARD.output')}"),
    )


def backward_dot(trace: Trace) -> str:
    """ȳ reaches x twice: once unchanged (identity) and once through J_F(x)ᵀ; the two add."""
    return _split_merge(
        "backward",
        ("Upstream gradient", f"ȳ = {vx(trace, 'BACKWARD.upstream')}"),
        ("Identity contribution", f"ȳ = {vx(trace, 'BACKWARD.identity')}"),
        ("Branch contribution", f"J_F(x)ᵀȳ = {vx(trace, 'BACKWARD.branch')}"),
        ("Input gradient", "x̄ = ȳ + J_F(x)ᵀȳ", f"x̄ = {vx(trace, 'BACKWARD.input')}"),
    )


def _check_cards(t: Trace) -> dict[str, tuple[str, list[str]]]:
    """Card id → (heading, lines) of the checks panel, every value read by its trace path."""
    return {
        "parameter": ("Branch-owned parameter", [
            vx(t, "PARAMETER.name"),
            f"W shape = {vx(t, 'PARAMETER.shape')}",
            f"W̄ = {vx(t, 'PARAMETER.gradient')}",
        ]),
        "zero": ("Zero-weight branch", [
            vx(t, "ZERO-BRANCH.name"),
            f"F(x) vanishes: y = x = {vx(t, 'ZERO-BRANCH.output')}",
            f"x̄ = ȳ = {vx(t, 'ZERO-BRANCH.input-gradient')}",
            f"W̄ = {vx(t, 'ZERO-BRANCH.weight-gradient')}",
            f"W̄ nonzero = {vx(t, 'ZERO-BRANCH.weight-gradient-nonzero')}",
        ]),
        "shape": ("Broadcastable is still invalid", [
            f"identity {vx(t, 'SHAPE-ERROR.identity')} vs branch {vx(t, 'SHAPE-ERROR.branch')}",
            f"generic addition: broadcastable = {vx(t, 'SHAPE-ERROR.broadcastable')}",
            f"residual merge: rejected = {vx(t, 'SHAPE-ERROR.rejected')}",
        ]),
        "gradcheck": ("Sampled gradient check", [
            f"input checks = {vx(t, 'GRADCHECK.input-checks')}, "
            f"weight checks = {vx(t, 'GRADCHECK.weight-checks')}",
            f"step = {vx(t, 'GRADCHECK.step')}, tolerance τ = {vx(t, 'GRADCHECK.tolerance')}",
            f"passed = {vx(t, 'GRADCHECK.passed')}",
        ]),
        "proof": ("Verified residual properties", [
            f"fixture {vx(t, 'CONFIG.name')}, shape(x) = {vx(t, 'CONFIG.shape')}",
            f"identity = {vx(t, 'PROOF.identity')}, gradient = {vx(t, 'PROOF.gradient')}",
            f"parameters = {vx(t, 'PROOF.parameters')}, broadcast = {vx(t, 'PROOF.broadcast')}",
        ]),
    }


def checks_dot(trace: Trace) -> str:
    """Five evidence cards: parameter ownership, zero branch, shape check, gradient check, proof."""
    cards = _check_cards(trace)
    # Two cards per row keeps the panel narrow enough to stay legible on a page; the legend
    # completes the last row. Invisible edges make the rows; graphviz stacks the rows of a
    # left-to-right layout in reverse declaration order, so the last row is declared first.
    rows = [["parameter", "zero"], ["shape", "gradcheck"], ["proof", "legend"]]
    lines = opening("checks") + legend()
    for key in [key for keys in reversed(rows) for key in keys if key != "legend"]:
        title, body = cards[key]
        lines.append(node(key, table(title, body, align="LEFT"), "check"))
    for keys in rows:
        lines += row(keys)
    return close(lines)


def stack_dot(trace: Trace) -> str:
    """Plain and residual four-layer stacks as two columns side by side, depth by depth."""
    factor = vx(trace, "STACK-CONFIG.branch-factor")
    keep = vx(trace, "STACK-CONFIG.residual-factor")
    # Top to bottom, unlike the other diagrams: two narrow columns read depth by depth like the
    # stack table and stay legible at phone width, where five-node rows would not.
    lines = opening("stack", rankdir="TB")
    lines += _stack_row(trace, "plain", f"Plain stack: each layer multiplies by {factor}")
    lines += _stack_row(trace, "residual", f"Residual stack: each layer multiplies by {keep}")
    # Declared last and tied to both columns, the legend sits centred below them.
    lines += legend(*row(["plain_gradient", "legend"]), *row(["residual_gradient", "legend"]))
    return close(lines)


def _stack_row(trace: Trace, kind: str, title: str) -> list[str]:
    """One cluster: depth nodes joined by layer edges, then the stack's input gradient."""
    residual = kind == "residual"
    lines = [
        f"  subgraph cluster_{kind} {{",
        f'    graph [id="{kind}_stack", class="stack {kind}", style="rounded", '
        f'label=<{heading(title)}>, labeljust="l"];',
    ]
    ids = []
    for record in trace.stack:
        depth = format_value(record.depth)
        node_id = f"{kind}_{depth}"
        value = v6(trace, f"STACK[{depth}].{kind}")
        merged = residual and record.depth > 0
        extra = {"peripheries": "2"} if merged else {}
        cls = "value merge" if merged else "value"
        lines.append("  " + node(node_id, table(f"depth {depth}", [value]), cls, **extra))
        ids.append(node_id)
    for before, after in pairwise(ids):
        if residual:
            lines.append("  " + edge(before, after, "identity"))
        lines.append("  " + edge(before, after, "learned"))
    grad = v6(trace, f"STACK-GRADIENT.{kind}")
    lines.append("  " + node(f"{kind}_gradient", table("Input gradient", [f"x̄ = {grad}"]),
                             "value gradient"))
    lines += ["  " + line for line in row([ids[-1], f"{kind}_gradient"])]
    lines.append("  }")
    return lines

