"""Numbered figures, tables and equations, and references to them by label.

Contract: a page numbers each kind of element in the order it shows them (``Numbering.label``,
called by the page's ``chart``, ``diagram``, ``table`` and ``equation``), and its text names
one by its id with ``ref``: ``ref("gf-training")`` (a chart's id is its name),
``ref("figure-forward")``, ``ref("table-stack")``, ``ref("equation-merge")``, rendered
"Figure 3" from the numbering, never typed: a link to it whose preview is the element's own
caption. A page is rendered twice when it names an
element before showing it (``render.render_one``); a label it never shows is a
located error at the line of its ``ref``. ``numbered_html(html)`` is the exact HTML of every
label and reference of a built page that the numbering accounts for, which the audit accepts
as it accepts a citation: a typed "Figure 3", or one out of step with the page, is a finding.
"""

from __future__ import annotations

import re

from markupsafe import Markup

from tracefile.errors import LocatedError

KINDS = ("Figure", "Table", "Equation")
_LABEL = '<span class="element-number" data-for="{id}">{kind} {number}</span>'
#: An equation's own label is its number in brackets, at the right; a reference says "Equation".
_EQUATION_LABEL = '<span class="element-number" data-for="{id}">({number})</span>'
_REF = '<a class="element-ref" href="#{id}">{kind} {number}</a>'
_LABEL_RE = re.compile(r'<span class="element-number" data-for="([a-z0-9-]+)">'
                       r"(?:(Figure|Table) ([0-9]+)|\(([0-9]+)\))</span>")
_REF_RE = re.compile(r'<a class="element-ref" href="#([a-z0-9-]+)">'
                     r"(Figure|Table|Equation) ([0-9]+)</a>")


class Numbering:
    """One rendering of a page's numbers; ``ref`` is the page's ``ref(label)``."""

    def __init__(self, known: dict[str, tuple[str, int]] | None = None) -> None:
        self.known = known  # every label the page shows, from a first rendering; None: first
        self.shown: dict[str, tuple[str, int]] = {}
        self.missed = False  # a ref named a label not yet shown

    def label(self, kind: str, element_id: str) -> Markup:
        """The number of the next ``kind`` ("Figure"), shown by the element ``element_id``."""
        if element_id in self.shown:
            raise LocatedError("<page>", None, f"{element_id!r} is shown twice on the page")
        number = 1 + sum(shown_kind == kind for shown_kind, _ in self.shown.values())
        self.shown[element_id] = (kind, number)
        form = _EQUATION_LABEL if kind == "Equation" else _LABEL
        return Markup(form).format(id=element_id, kind=kind, number=number)

    def __call__(self, element_id: str) -> Markup:
        found = self.shown.get(element_id) or (self.known or {}).get(element_id)
        if found is None:
            if self.known is not None:
                raise LocatedError("<page>", None, f"ref({element_id!r}): no figure, table or "
                                f"equation of the page has that label (it has: "
                                f"{', '.join(self.known) or 'none'})")
            self.missed = True
            return Markup("")
        kind, number = found
        return Markup(_REF).format(id=element_id, kind=kind, number=number)


def numbered_html(html: str) -> frozenset[str]:
    """The labels and references of a built page that its numbering accounts for: the n-th
    label of a kind reads n, and a reference reads what the label it links to reads."""
    counts = dict.fromkeys(KINDS, 0)
    labels: dict[str, tuple[str, str]] = {}
    accepted = set()
    for found in _LABEL_RE.finditer(html):
        element_id, kind, number, equation = found.groups()
        kind, number = (kind, number) if equation is None else ("Equation", equation)
        counts[kind] += 1
        if number == str(counts[kind]) and element_id not in labels:
            labels[element_id] = (kind, number)
            accepted.add(found.group(0))
    for found in _REF_RE.finditer(html):
        element_id, kind, number = found.groups()
        if labels.get(element_id) == (kind, number):
            accepted.add(found.group(0))
    return frozenset(accepted)
