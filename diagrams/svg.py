"""Render DOT text to an inline, accessible, theme-neutral SVG with Graphviz's ``dot``.

Contract: ``render_svg(dot_text, diagram_id, title, desc)`` runs ``dot -Tsvg`` (RenderError if
dot is missing, fails or hangs) and returns an ``<svg>`` element ready to inline in HTML:
no XML prolog, DOCTYPE or comments (graphviz writes its version there), no graphviz
``<title>`` tooltips, every id (and every ``#id`` reference) prefixed with ``diagram_id`` so
several diagrams share a page, ``role="img"`` with ``aria-labelledby`` naming a first-child
``<title>`` and ``<desc>``, ``class="residual-diagram"``, a viewBox without fixed width/height
attributes (an inline style caps the width at the natural size and at 100%), and graphviz's
default black turned into ``currentColor`` so it follows the page's light or dark text colour.
Output is a function of the input only: the same DOT gives byte-identical SVG.
``DIAGRAMS`` maps each diagram name to (dot function, title, description).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Callable

from markupsafe import escape

from diagrams.dot import backward_dot, checks_dot, forward_dot, stack_dot
from diagrams.dot_decoder import TRACE as DECODER_TRACE
from diagrams.dot_decoder import decoder_block_dot
from diagrams.errors import RenderError
from tracefile import Trace, TraceSet
from tracefile.schemas import CHAPTER_TRACE

TIMEOUT_SECONDS = 60
ID_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
SVG_OPEN_RE = re.compile(r"<svg\b[^>]*>")
VIEWBOX_RE = re.compile(r'viewBox="([0-9.\- ]+)"')
WIDTH_RE = re.compile(r'width="([0-9.]+)pt"')

DIAGRAMS: dict[str, tuple[Callable[[Trace], str], str, str]] = {
    "forward": (
        forward_dot,
        "Split and rejoin in the forward pass",
        "The input x feeds a solid identity path and a dashed learned branch F(x); both meet "
        "at a double-bordered addition whose result is the output y = x + F(x). Each box "
        "shows its traced value.",
    ),
    "backward": (
        backward_dot,
        "Add both reverse-mode contributions",
        "The upstream gradient y-bar reaches the input twice: unchanged along the solid "
        "identity path and as the branch vector-Jacobian product along the dashed learned "
        "path; the double-bordered addition sums them into the input gradient x-bar.",
    ),
    "checks": (
        checks_dot,
        "Check parameters, identity, and shape",
        "Five cards of traced evidence: the branch owns its weight and receives a gradient; "
        "a zero-weight branch gives y = x and x-bar = y-bar while its weight gradient stays "
        "nonzero; shapes that generic addition broadcasts are rejected by the residual merge; "
        "the sampled gradient check passes; the verified residual properties.",
    ),
    "stack": (
        stack_dot,
        "Compare repeated plain and residual transformations",
        "Two columns side by side: a plain stack whose layers apply only the dashed learned "
        "path, and a residual stack whose layers add a solid identity path to it, with the "
        "traced value after every layer and each stack's input gradient at the bottom.",
    ),
}


DIAGRAMS["decoder-block"] = (
    decoder_block_dot,
    "One block of the course's decoder",
    "Top to bottom: the residual stream enters; a dashed branch normalizes it with RMSNorm and "
    "runs causal self-attention, and a double-bordered addition adds the result to the stream "
    "carried unchanged along a solid identity path; a second dashed branch, RMSNorm then the "
    "MLP, is added the same way. Every box shows the stream's shape or the branch's sizes.",
)
#: The trace each diagram draws (the chapter's unless named here).
DIAGRAM_TRACE = {"decoder-block": DECODER_TRACE}

# Phone-width variants: top to bottom instead of left to right, one column instead of two. A
# page shows each diagram with its variant, and CSS picks one by the screen's width.
NARROW = "-narrow"
DIAGRAMS.update({
    f"{name}{NARROW}": (functools.partial(DIAGRAMS[name][0], narrow=True), *DIAGRAMS[name][1:])
    for name in ("forward", "backward", "stack")
})


def diagram_trace_id(name: str) -> str:
    """The id of the trace diagram ``name`` draws: ``DIAGRAM_TRACE``'s, else the chapter's."""
    return DIAGRAM_TRACE.get(name, CHAPTER_TRACE)


def diagram_trace(name: str, traces: Trace | TraceSet) -> Trace | None:
    """The trace diagram ``name`` draws (``diagram_trace_id``), taken from ``traces``; None
    when it is not among them."""
    wanted = diagram_trace_id(name)
    if isinstance(traces, TraceSet):
        return traces.traces.get(wanted)
    return traces if traces.trace_id == wanted else None


def render_diagram(name: str, trace: Trace) -> str:
    """The inline SVG of registered diagram ``name`` for ``trace``."""
    if name not in DIAGRAMS:
        raise RenderError(f"<diagram {name}>", None,
                          f"unknown diagram {name!r}; known: {', '.join(DIAGRAMS)}")
    dot_fn, title, desc = DIAGRAMS[name]
    return render_svg(dot_fn(trace), name, title, desc)


def render_svg(dot_text: str, diagram_id: str, title: str, desc: str) -> str:
    """Run ``dot -Tsvg`` on ``dot_text`` and make the result safe to inline (see module doc)."""
    where = f"<diagram {diagram_id}>"
    if not ID_RE.fullmatch(diagram_id):
        raise RenderError(where, None, "diagram id must match [A-Za-z][A-Za-z0-9_-]*")
    raw = run_dot(dot_text, where)
    return clean_svg(raw, diagram_id, title, desc, where)


def run_dot(dot_text: str, where: str) -> str:
    """Graphviz's SVG for ``dot_text``; RenderError names what went wrong."""
    exe = shutil.which("dot")
    if exe is None:
        raise RenderError(where, None, "Graphviz 'dot' not found on PATH; install graphviz "
                          "(Debian: apt-get install graphviz)")
    try:
        done = subprocess.run(
            [exe, "-Tsvg"], input=dot_text.encode("utf-8"), capture_output=True,
            timeout=TIMEOUT_SECONDS, check=False,
        )
    except subprocess.TimeoutExpired:
        raise RenderError(where, None, f"dot -Tsvg took longer than {TIMEOUT_SECONDS} s") from None
    except OSError as err:
        raise RenderError(where, None, f"cannot run {exe}: {err.strerror or err}") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        first = lines[0] if lines else "(no message)"
        raise RenderError(where, None, f"dot -Tsvg failed (exit {done.returncode}): {first}")
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise RenderError(where, None, "dot -Tsvg wrote output that is not UTF-8") from None


def clean_svg(raw: str, diagram_id: str, title: str, desc: str, where: str,
              kind: str = "residual-diagram") -> str:
    """Strip the renderer's prolog and comments, prefix ids, and add the accessible root
    (``kind`` is its CSS class: Graphviz diagrams and matplotlib plots share this cleaner)."""
    body = re.sub(r"<!--.*?-->", "", raw, flags=re.DOTALL)
    body = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", "", body)
    # Graphviz titles every node and edge with its DOT name; they would be hover tooltips and
    # screen-reader text saying "x->identity", so only the diagram's own title stays.
    body = re.sub(r"<title>[^<]*</title>\n?", "", body)
    match = SVG_OPEN_RE.search(body)
    if match is None:
        raise RenderError(where, None, "the SVG output has no <svg> element")
    root = _root_tag(match.group(0), diagram_id, where, kind)
    # Graphviz writes every "-" as "&#45;"; "-" needs no escaping in XML, and plain ids and
    # classes are what CSS selectors, getElementById and the number audit expect to see.
    inner = _prefix_ids(body[match.end():].replace("&#45;", "-"), diagram_id)
    inner = _theme_colours(inner)
    head = (f'<title id="{diagram_id}-title">{escape(title)}</title>\n'
            f'<desc id="{diagram_id}-desc">{escape(desc)}</desc>')
    lines = [line for line in (root + "\n" + head + inner).splitlines() if line.strip()]
    return "\n".join(lines) + "\n"


def _root_tag(tag: str, diagram_id: str, where: str, kind: str) -> str:
    view = VIEWBOX_RE.search(tag)
    width = WIDTH_RE.search(tag)
    if view is None or width is None:
        raise RenderError(where, None, "the SVG output lacks viewBox or width")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'class="{kind}" data-diagram="{diagram_id}" viewBox="{view.group(1)}" '
        f'style="width:{width.group(1)}pt;max-width:100%;height:auto" role="img" '
        f'aria-labelledby="{diagram_id}-title {diagram_id}-desc">'
    )


def _prefix_ids(body: str, prefix: str) -> str:
    def ident(text: str) -> str:
        return f"{prefix}-{text}"

    body = re.sub(r'\bid="([^"]*)"', lambda m: f'id="{ident(m.group(1))}"', body)
    body = re.sub(r'url\(#([^)"]*)\)', lambda m: f"url(#{ident(m.group(1))})", body)
    return re.sub(r'href="#([^"]*)"', lambda m: f'href="#{ident(m.group(1))}"', body)


def _theme_colours(body: str) -> str:
    body = body.replace('stroke="black"', 'stroke="currentColor"')
    body = body.replace('fill="black"', 'fill="currentColor"')
    body = body.replace('fill="white"', 'fill="none"')
    # Graphviz leaves black text without a fill attribute; give it the page's text colour.
    body = body.replace("<text>", '<text fill="currentColor">')  # matplotlib's mathtext
    return re.sub(r"<text (?![^>]*\bfill=)", '<text fill="currentColor" ', body)
