"""The labs' notebooks: each ``notebooks/<lab>.py`` (jupytext's percent format) written as the
Jupyter notebook ``notebooks/<lab>.ipynb`` the lab page offers for download.

Contract: ``notebook_files(root)`` maps each published notebook's path in the site to its
bytes, in name order. A source must be Python (it is run as written) whose Markdown cells hold
no number, the rule the pages keep (a notebook shows the numbers it computes); a source that
breaks either is a ``BuildError`` at ``FILE:LINE``. The notebook carries no outputs and no
pairing metadata, and its cells are numbered rather than given random ids, so the same source
always gives the same bytes. Nothing here runs a notebook: the test suite executes each and
compares what it prints with the published traces.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext

from diagrams.format import number_tokens
from sitebuild.errors import BuildError

NOTEBOOKS = "notebooks"
_CELL = re.compile(r"# %%(?P<markdown>\s*\[markdown\])?")


def notebook_files(root: Path) -> dict[str, bytes]:
    """Every notebook the site publishes, by its path in the site (see the module doc)."""
    found = {}
    for source in sorted((root / NOTEBOOKS).glob("*.py")):
        name = source.relative_to(root).as_posix()
        text = source.read_text(encoding="utf-8")
        _check(text, name)
        notebook = jupytext.reads(text, fmt="py:percent")
        notebook.metadata.pop("jupytext", None)
        for number, cell in enumerate(notebook.cells, 1):  # not the random ids nbformat draws
            cell.id = f"{source.stem}-{number}"
        found[f"{NOTEBOOKS}/{source.stem}.ipynb"] = jupytext.writes(notebook, "ipynb").encode()
    return found


def _check(text: str, name: str) -> None:
    try:
        compile(text, name, "exec")
    except SyntaxError as err:
        raise BuildError(name, f"not Python: {err.msg}", err.lineno) from None
    markdown = False
    for number, row in enumerate(text.splitlines(), 1):
        if cell := _CELL.match(row):
            markdown = bool(cell.group("markdown"))
        elif markdown and (found := number_tokens(row)):
            raise BuildError(name, f"a Markdown cell holds the number {found[0]!r}: a "
                             "notebook prints the numbers it computes", number)
