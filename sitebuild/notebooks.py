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

from pathlib import Path
from typing import Any

import jupytext

from diagrams.format import number_tokens
from sitebuild.errors import BuildError

NOTEBOOKS = "notebooks"


def notebook_files(root: Path) -> dict[str, bytes]:
    """Every notebook the site publishes, by its path in the site (see the module doc)."""
    found = {}
    for source in sorted((root / NOTEBOOKS).glob("*.py")):
        name = source.relative_to(root).as_posix()
        if source.is_symlink() or not source.is_file():
            raise BuildError(name, "is a symbolic link or not a file: only files inside the "
                             "project publish")
        text = source.read_text(encoding="utf-8")
        _check_python(text, name)
        notebook = jupytext.reads(text, fmt="py:percent")
        _check_markdown(notebook.cells, text, name)
        notebook.metadata.pop("jupytext", None)
        for number, cell in enumerate(notebook.cells, 1):  # not the random ids nbformat draws
            cell.id = f"{source.stem}-{number}"
        found[f"{NOTEBOOKS}/{source.stem}.ipynb"] = jupytext.writes(notebook, "ipynb").encode()
    return found


def _check_python(text: str, name: str) -> None:
    try:
        compile(text, name, "exec")
    except SyntaxError as err:
        raise BuildError(name, f"not Python: {err.msg}", err.lineno) from None
    except (RecursionError, MemoryError):
        raise BuildError(name, "not Python this interpreter can compile: an expression is "
                         "nested too deeply") from None


def _check_markdown(cells: list[Any], text: str, name: str) -> None:
    """No number in a Markdown cell, as jupytext reads the cells (whatever marker starts
    them), reported at the line of the source that holds it."""
    rows, at = text.splitlines(), 0
    for cell in cells:
        for line in cell.source.splitlines():
            at = next((n for n in range(at, len(rows)) if line and rows[n].endswith(line)), at)
            if cell.cell_type == "markdown" and (found := number_tokens(line)):
                raise BuildError(name, f"a Markdown cell holds the number {found[0]!r}: a "
                                 "notebook prints the numbers it computes", at + 1)
