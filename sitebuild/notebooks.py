"""The labs' notebooks: each ``notebooks/<lab>.py`` (jupytext's percent format), published as
the executed Jupyter notebook ``notebooks/<lab>.ipynb`` the lab page offers for download.

Contract: ``notebook_files(root)`` maps each published notebook's path in the site to its
bytes, in name order. A source must be Python (it is run as written) whose Markdown cells hold
no number, the rule the pages keep (a notebook shows the numbers it computes); a source that
breaks either is a ``BuildError`` at ``FILE:LINE``. What is published is the source's
record, ``records/notebooks/<lab>.ipynb``: the engine executed it (``./dev record``), outputs
and all, and it is published byte for byte. Nothing here runs a notebook. A record whose
cells are not the source's (the source changed since) is a ``BuildError`` at the first cell
that differs, as is a source with no record; that the record is what the current code prints
is the engine's check (``record --check``, ``--verify``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jupytext
import nbformat

from diagrams.format import number_tokens
from sitebuild.engine_runs import RECORDS
from sitebuild.errors import BuildError

NOTEBOOKS = "notebooks"
#: The line that starts a cell in jupytext's percent format ("# %%", "#%% [markdown]", …).
CELL_MARKER = re.compile(r"^#\s*%%")


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
        found[f"{NOTEBOOKS}/{source.stem}.ipynb"] = _executed(root, source, notebook.cells, text)
    return found


def _executed(root: Path, source: Path, cells: list[Any], text: str) -> bytes:
    """The record of ``source`` executed, if its cells are the source's (see the module doc)."""
    name = source.relative_to(root).as_posix()
    record = f"{RECORDS}/{NOTEBOOKS}/{source.stem}.ipynb"
    remake = f"run `./dev record` and commit {record}"
    if (root / record).is_symlink() or not (root / record).is_file():
        raise BuildError(name, f"has no executed record, {record} (a file, not a link): "
                         f"{remake}")
    data = (root / record).read_bytes()
    try:
        executed = nbformat.reads(data.decode("utf-8"), as_version=4).cells
    except (UnicodeDecodeError, ValueError) as error:
        raise BuildError(record, f"not a notebook: {error}") from None
    ours, theirs = ([(c.cell_type, c.source) for c in found] for found in (cells, executed))
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
                     min(len(ours), len(theirs)))
        markers = [n for n, row in enumerate(text.splitlines(), 1) if CELL_MARKER.match(row)]
        raise BuildError(name, f"changed since {record} was executed (cell {first + 1} "
                         f"differs): {remake}", markers[first] if first < len(markers) else None)
    return data


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
