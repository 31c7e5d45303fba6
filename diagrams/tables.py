"""HTML tables of traced values, rendered from Jinja templates in diagrams/templates/.

Contract: ``render_table(name, trace) -> Markup`` for the names in ``TABLES`` ("stack",
"gradient-split", "zero-branch", "scaled", "predictions"). Python decides which value paths
fill which cell; templates only place them — no arithmetic and no formatting in a template.
Every number in a cell is ``tv(path, fmt)``, i.e. ``diagrams.format.traced`` (the exact value
on hover, the path in ``data-trace``). Autoescape and StrictUndefined are on, so a hostile
name cannot inject HTML and a misspelled variable fails. Output has no blank or indented
lines, so it can sit in a Markdown page as one raw-HTML block.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError
from markupsafe import Markup

from diagrams.errors import RenderError
from diagrams.format import traced
from tracefile import Trace
from tracefile.value_paths import key_text

TEMPLATES = Path(__file__).parent / "templates"
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The tables' Jinja environment: autoescaped, strict about undefined names."""
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _keyed_rows(trace: Trace, kind: str, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """One row per record of a keyed kind: each of ``keys`` as its value path, the record
    named by its key as the trace writes it (``STACK[4].plain``)."""
    spec = trace.schema.specs[kind]
    return [{key: f"{kind}[{key_text(spec, record)}].{key}" for key in keys}
            for record in getattr(trace, spec.attr)]


def _stack(trace: Trace) -> dict[str, Any]:
    return {"rows": _keyed_rows(trace, "STACK", ("depth", "plain", "residual")),
            "gradient": {"plain": "STACK-GRADIENT.plain", "residual": "STACK-GRADIENT.residual"}}


def _gradient_split(trace: Trace) -> dict[str, Any]:
    # Row labels are x̄ with a 1-based subscript: an index, not a traced value, and written with
    # subscript digits so it is not mistaken for one.
    rows = [
        {"label": "x̄" + str(i + 1).translate(SUBSCRIPTS),
         "identity": f"BACKWARD.identity[{i}]", "branch": f"BACKWARD.branch[{i}]",
         "total": f"BACKWARD.input[{i}]"}
        for i in range(len(trace.backward.input))
    ]
    return {"rows": rows}


def _zero_branch(trace: Trace) -> dict[str, Any]:
    rows = [
        {"label": "Output y", "path": "ZERO-BRANCH.output", "format": "exact"},
        {"label": "Input gradient x̄", "path": "ZERO-BRANCH.input-gradient", "format": "exact"},
        {"label": "Weight gradient W̄", "path": "ZERO-BRANCH.weight-gradient", "format": "exact"},
        {"label": "Weight gradient is nonzero", "path": "ZERO-BRANCH.weight-gradient-nonzero",
         "format": "exact"},
    ]
    return {"name": "ZERO-BRANCH.name", "rows": rows}


def _silent_scale(trace: Trace) -> dict[str, Any]:
    rows = [
        {"label": "Output y", "weight": "ZERO-BRANCH.output", "scale": "SILENT-SCALE.output"},
        {"label": "Weight gradient W̄", "weight": "ZERO-BRANCH.weight-gradient",
         "scale": "SILENT-SCALE.weight-gradient"},
        {"label": "Weight moves on the first update",
         "weight": "ZERO-BRANCH.weight-gradient-nonzero",
         "scale": "SILENT-SCALE.weight-moves-first"},
    ]
    return {"rows": rows}


def _stack_layers(trace: Trace) -> dict[str, Any]:
    return {"rows": _keyed_rows(trace, "STACK-LAYER", ("layer", "plain", "residual"))}


def _scaled(trace: Trace) -> dict[str, Any]:
    return {"rows": _keyed_rows(trace, "SCALED", ("alpha", "output"))}


# (question, trace path of its answer, section that explains it). The questions are posed at
# the top and the end of the chapter; this table, at the end, is the one place their answers are
# shown.
PREDICTIONS = (
    ("The merge output y = x + F(x)", "FORWARD.output", "merge"),
    ("Identity contribution to x̄", "BACKWARD.identity", "backward"),
    ("Branch contribution J_F(x)ᵀȳ to x̄", "BACKWARD.branch", "backward"),
    ("Total input gradient x̄", "BACKWARD.input", "backward"),
    ("Zero-weight branch: output", "ZERO-BRANCH.output", "zero-branch"),
    ("Zero-weight branch: input gradient", "ZERO-BRANCH.input-gradient", "zero-branch"),
    ("Zero-weight branch: weight gradient", "ZERO-BRANCH.weight-gradient", "zero-branch"),
    ("Mismatched shapes: generic addition broadcasts", "SHAPE-ERROR.broadcastable",
     "exact-shapes"),
    ("Mismatched shapes: the residual merge rejects", "SHAPE-ERROR.rejected", "exact-shapes"),
    ("Same tensor on both operands: its gradient", "SHARED-OPERAND.gradient", "shared"),
    ("Plain stack: share of the adjoint that reaches the input", "RETENTION.plain", "stack"),
    ("Residual stack: share of the adjoint that reaches the input", "RETENTION.residual",
     "stack"),
    ("Shape of the merge output (nothing concatenated)", "CONFIG.shape", "roles"),
)


# The checks diagram's cards as rows, for screens too narrow for the diagram: (heading,
# ((label, path), ...)). Every value is the path the diagram's card shows.
CHECK_CARDS = (
    ("Branch-owned parameter", (("parameter", "PARAMETER.name"), ("W shape", "PARAMETER.shape"),
                                ("W̄", "PARAMETER.gradient"))),
    ("Zero-weight branch", (("parameter", "ZERO-BRANCH.name"),
                            ("F(x) vanishes: y = x", "ZERO-BRANCH.output"),
                            ("x̄ = ȳ", "ZERO-BRANCH.input-gradient"),
                            ("W̄", "ZERO-BRANCH.weight-gradient"),
                            ("W̄ nonzero", "ZERO-BRANCH.weight-gradient-nonzero"))),
    ("Broadcastable is still invalid", (("identity shape", "SHAPE-ERROR.identity"),
                                        ("branch shape", "SHAPE-ERROR.branch"),
                                        ("generic addition broadcasts",
                                         "SHAPE-ERROR.broadcastable"),
                                        ("residual merge rejects", "SHAPE-ERROR.rejected"))),
    ("Sampled gradient check", (("input checks", "GRADCHECK.input-checks"),
                                ("weight checks", "GRADCHECK.weight-checks"),
                                ("step", "GRADCHECK.step"), ("tolerance τ", "GRADCHECK.tolerance"),
                                ("passed", "GRADCHECK.passed"))),
    ("Verified residual properties", (("fixture", "CONFIG.name"), ("shape(x)", "CONFIG.shape"),
                                      ("identity", "PROOF.identity"),
                                      ("gradient", "PROOF.gradient"),
                                      ("parameters", "PROOF.parameters"),
                                      ("broadcast", "PROOF.broadcast"))),
)


def _checks(trace: Trace) -> dict[str, Any]:
    return {"cards": [{"heading": heading, "rows": [{"label": label, "path": path}
                                                    for label, path in rows]}
                      for heading, rows in CHECK_CARDS]}


def _predictions(trace: Trace) -> dict[str, Any]:
    return {"rows": [{"label": label, "path": path, "anchor": anchor}
                     for label, path, anchor in PREDICTIONS]}


TABLES: dict[str, tuple[str, Callable[[Trace], dict[str, Any]]]] = {
    "stack": ("stack.html.j2", _stack),
    "gradient-split": ("gradient-split.html.j2", _gradient_split),
    "zero-branch": ("zero-branch.html.j2", _zero_branch),
    "scaled": ("scaled.html.j2", _scaled),
    "predictions": ("predictions.html.j2", _predictions),
    "checks-narrow": ("checks-narrow.html.j2", _checks),
    "silent-scale": ("silent-scale.html.j2", _silent_scale),
    "stack-layers": ("stack-layers.html.j2", _stack_layers),
}


def render_table(name: str, trace: Trace) -> Markup:
    """The HTML of table ``name`` filled from ``trace``.

    Raises RenderError for an unknown table or a template error, TracePathError (from ``tv``)
    for a path the trace lacks.
    """
    if name not in TABLES:
        raise RenderError(f"<table {name}>", None,
                          f"unknown table {name!r}; known: {', '.join(TABLES)}")
    file, context = TABLES[name]
    where = f"diagrams/templates/{file}"
    try:
        template = environment().get_template(file)
        html = template.render(tv=lambda path, fmt="exact": traced(trace, path, fmt),
                               **context(trace))
    except TemplateError as err:
        raise RenderError(where, getattr(err, "lineno", None), str(err)) from None
    lines = [line.strip() for line in html.splitlines()]
    return Markup("\n".join(line for line in lines if line) + "\n")
