"""One look per variant across every chart of the site: a colour means one thing everywhere.

Contract: ``look(key)`` is the colour, line style and marker a chart's line is drawn with. A key
names a variant's family (``"plain"``, ``"residual"``: the default start, ``"residual-scaled"``,
``"residual-zero"``, ``"pre-norm"``, ``"post-norm"``), which fixes its colour and marker, then
optionally a degree after a slash (``"plain/eight"``: a depth, a warm-up, a bit width), which
fixes its line style; or ``"quantity/N"``, the N-th of a chart's lines that are not variants
(a stream and its writes, path counts), drawn in the page's ink and grey so that no colour of a
variant is borrowed. The explorer's curves use the families' colours too (``lab.css``). The
colours are Okabe and Ito's hues, darkened where needed so that each line has a contrast of at
least three to one on Material's light and its slate background alike (WCAG's rule for
graphical objects): one drawing serves both themes.
"""

from __future__ import annotations

from diagrams.errors import RenderError

#: Each family's colour and marker.
FAMILIES: dict[str, tuple[str, str]] = {
    "plain": ("#C08400", "o"),
    "residual": ("#1D97DC", "s"),
    "residual-scaled": ("#009E73", "^"),
    "residual-zero": ("#CA74A4", "D"),
    "pre-norm": ("#D55E00", "v"),
    "post-norm": ("#0072B2", "P"),
}
#: Each degree's line style.
DEGREES: dict[str, str] = {
    "": "-", "two": "-", "four": "--", "eight": "-.", "thirty-two": ":",
    "warm-up": "--", "eight-bit": "-", "four-bit": "--",
    "default-start": "-", "scaled-start": "--", "zero-start": ":",
}
#: The words a line's legend label holds when it is drawn with a family's or degree's look:
#: the colour and the words say the same thing.
WORDS: dict[str, str] = {
    "plain": "plain", "residual": "residual", "residual-scaled": "scaled",
    "residual-zero": "zero", "pre-norm": "pre-norm", "post-norm": "post-norm",
    "two": "two", "four": "four", "eight": "eight", "thirty-two": "thirty-two",
    "warm-up": "warm-up", "eight-bit": "eight bits", "four-bit": "four bits",
    "default-start": "default", "scaled-start": "scaled", "zero-start": "zero",
}
#: The lines of a chart that are not variants: the page's ink (black, drawn as currentColor)
#: and grey, told apart by line style and marker.
QUANTITIES: tuple[tuple[str, str, str], ...] = (
    ("#000000", "-", "o"), ("#888888", "--", "s"), ("#000000", ":", "^"), ("#888888", "-.", "D"),
)


def look(key: str) -> tuple[str, str, str]:
    """The colour, line style and marker of ``key`` (see the module doc)."""
    family, _, degree = key.partition("/")
    if family == "quantity" and degree.isdigit() and 0 < int(degree) <= len(QUANTITIES):
        return QUANTITIES[int(degree) - 1]
    if family not in FAMILIES or degree not in DEGREES:
        degrees = ", ".join(d for d in DEGREES if d)
        raise RenderError("<look>", None, f"no look {key!r}: a family of "
                          f"{', '.join(FAMILIES)}, then /DEGREE of {degrees}, or quantity/N up "
                          f"to {len(QUANTITIES)}")
    colour, marker = FAMILIES[family]
    return colour, DEGREES[degree], marker
