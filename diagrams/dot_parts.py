"""Building blocks of the DOT text in diagrams/dot.py: graph frame, nodes, edges, legend.

Contract: every piece of text that reaches a label passes through ``esc`` (HTML-like label
escaping), every node and edge gets an explicit ``id`` and ``class``, and attribute values are
fixed identifiers of this module (never trace text), so the DOT is well formed for any trace.
"""

from __future__ import annotations

import re
from itertools import pairwise

FONT = "DejaVu Sans,Helvetica,Arial,sans-serif"
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
EDGE_STYLE = {"identity": "solid", "learned": "dashed", "merge": "solid"}
# Graphviz expands \N, \G, \L, \T, \H and \E (node, graph and edge names) even inside
# HTML-like labels, after decoding character references; a doubled backslash is the one
# spelling that reaches the SVG as a single backslash.
_ESCAPES = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord('"'): "&quot;",
            ord("'"): "&#39;", ord("\\"): "\\\\"}


def esc(text: str) -> str:
    """Escape text for a graphviz HTML-like label (parsed as XML by graphviz, with its own
    backslash escapes on top)."""
    return text.translate(_ESCAPES)


_UNESCAPES = [("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"), ("\\\\", "\\"),
              ("&amp;", "&")]
_LABEL_TEXT = re.compile(r">([^<>]+)<")


def label_texts(dot_text: str) -> list[str]:
    """What a reader should see: the text between tags of every HTML-like label, unescaped
    (labels are one line each, so the search stays inside the line after ``label=<``)."""
    found = []
    for line in dot_text.splitlines():
        if "label=<" in line:
            for text in _LABEL_TEXT.findall(line.split("label=<", 1)[1]):
                for escaped, plain in _UNESCAPES:
                    text = text.replace(escaped, plain)
                if text.strip():
                    found.append(text)
    return found


def _attrs(attrs: dict[str, str]) -> str:
    for value in attrs.values():
        # Attribute values are this module's constants; a quote would mean a bug here.
        assert '"' not in value and "\\" not in value, value
    return ", ".join(f'{key}="{value}"' for key, value in attrs.items())


def opening(name: str, rankdir: str = "LR") -> list[str]:
    """The graph header: left-to-right, transparent background, one font everywhere."""
    assert IDENT_RE.fullmatch(name), name
    font = f'fontname="{FONT}"'
    return [
        f"digraph {name} {{",
        f'  graph [id="graph", class="residual-graph", rankdir="{rankdir}", bgcolor="transparent", '
        f'{font}, fontsize="12", nodesep="0.35", ranksep="0.45", pad="0.15"];',
        f'  node [{font}, fontsize="12", shape="box", style="rounded", penwidth="1.2", '
        f'margin="0.12,0.06"];',
        f'  edge [{font}, fontsize="11", penwidth="1.4", arrowsize="0.8"];',
    ]


def close(lines: list[str]) -> str:
    return "\n".join([*lines, "}"]) + "\n"


def node(node_id: str, label: str, cls: str, **attrs: str) -> str:
    """``id [id=…, class=…, label=<…>]``; ``label`` is already-escaped HTML-like markup."""
    assert IDENT_RE.fullmatch(node_id), node_id
    head = _attrs({"id": node_id, "class": cls, **attrs})
    return f"  {node_id} [{head}, label=<{label}>];"


def edge(tail: str, head: str, cls: str, **attrs: str) -> str:
    """An edge whose line style follows its class: identity solid, learned dashed."""
    edge_id = f"{tail}__{head}__{cls}"
    style = EDGE_STYLE.get(cls, "solid")
    return f"  {tail} -> {head} [{_attrs({'id': edge_id, 'class': cls, 'style': style, **attrs})}];"


def row(node_ids: list[str]) -> list[str]:
    """Invisible edges that keep ``node_ids`` in one left-to-right row."""
    return [f"  {invisible(a, b)}" for a, b in pairwise(node_ids)]


def table(title: str, lines: list[str], align: str = "CENTER") -> str:
    """A node label: a bold heading over one line per value, all escaped."""
    cells = [f'<TR><TD ALIGN="{align}"><B>{esc(title)}</B></TD></TR>']
    cells += [f'<TR><TD ALIGN="{align}">{esc(line)}</TD></TR>' for line in lines]
    return '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(
        cells) + "</TABLE>"


def heading(text: str) -> str:
    return f"<B>{esc(text)}</B>"


def legend(*placement: str) -> list[str]:
    """The key to line styles and borders: one node, then the ``placement`` DOT lines.

    Where the caller declares it matters: graphviz orders a rank's nodes by declaration, so
    each diagram puts it where the picture was checked to read well. The samples are drawn with
    the styles the edges use and the words say the same, so the meaning survives without
    colour, and without the samples.
    """
    rows = [
        '<TR><TD COLSPAN="2" ALIGN="LEFT"><B>Legend</B></TD></TR>',
        f'<TR>{_line_sample("solid")}<TD ALIGN="LEFT">solid line: identity path</TD></TR>',
        f'<TR>{_line_sample("dashed")}<TD ALIGN="LEFT">dashed line: learned branch</TD></TR>',
        '<TR><TD><TABLE BORDER="1" CELLBORDER="1" CELLSPACING="1" CELLPADDING="0">'
        '<TR><TD WIDTH="26" HEIGHT="8"></TD></TR></TABLE></TD>'
        '<TD ALIGN="LEFT">double border: merge (addition)</TD></TR>',
    ]
    label = ('<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1">'
             + "".join(rows) + "</TABLE>")
    return [node("legend", label, "legend", shape="plaintext", fontsize="11"), *placement]


def invisible(tail: str, head: str) -> str:
    """An edge that only constrains the layout."""
    return f'{tail} -> {head} [id="{tail}__{head}__layout", style="invis"];'



def _line_sample(style: str) -> str:
    """A short horizontal line at mid-height: the bottom border of the upper of two cells."""
    return (
        '<TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">'
        f'<TR><TD WIDTH="36" HEIGHT="7" SIDES="B" BORDER="1" STYLE="{style}"></TD></TR>'
        '<TR><TD WIDTH="36" HEIGHT="7"></TD></TR></TABLE></TD>'
    )
