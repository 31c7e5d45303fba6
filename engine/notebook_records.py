"""The labs' notebooks, executed: each ``notebooks/<lab>.py`` (jupytext's percent format) run
from top to bottom in a Python kernel and kept as ``records/notebooks/<lab>.ipynb``, outputs
and all, so the site publishes a notebook a reader can read before running it.

Contract: ``sources()`` lists the notebooks' sources. ``notebook_key(source)`` is what an
executed notebook depends on: the source's text, the engine code it imports
(`engine.code_key.code_key`), the versions of the notebook libraries and the bytes of each
recorded trace the source names. ``execute(source, timeout)`` returns the executed notebook's
bytes: cells numbered ``<lab>-N`` (not nbformat's random ids), no timings, the source's
kernelspec, and the language without its patch version, so one key gives one set of bytes.
The kernel inherits this process's environment: the caller chooses the cell cache, and
unsets the grid-records variable so that a notebook's few cells never rewrite a lab's grid.
A cell that fails is an `EngineError` naming the notebook and the cell's error.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

from engine.code_key import ROOT, code_key, project_imports
from engine.errors import EngineError
from tracefile.schemas import SCHEMAS

NOTEBOOKS = ROOT / "notebooks"
#: The kernel a record runs in: this Python's own (the notebooks name the project's, which a
#: learner installs and CI does not).
KERNEL = "python3"
LIBRARIES = ("jupytext", "nbclient", "nbformat", "ipykernel")


def sources() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.py"))


def record_name(source: Path) -> str:
    """The executed notebook's path in ``records/`` (and in the site)."""
    return f"notebooks/{source.stem}.ipynb"


def notebook_key(source: Path, records: Path) -> str:
    """What the executed ``source`` depends on (see the module doc)."""
    text = source.read_text(encoding="utf-8")
    traces = [records / schema.file_name for trace_id, schema in sorted(SCHEMAS.items())
              if f'"{trace_id}"' in text]
    versions = " ".join(f"{name}=={metadata.version(name)}" for name in LIBRARIES)
    try:
        modules = sorted(project_imports(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        modules = []  # not Python: the render names the line; the text alone keys it
    return code_key(modules, text, versions,
                    *(hashlib.sha256(path.read_bytes()).hexdigest() for path in traces
                      if path.is_file()))


def execute(source: Path, timeout: float) -> bytes:
    """``source`` run in a fresh kernel, as a notebook's bytes (see the module doc)."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    notebook = jupytext.reads(source.read_text(encoding="utf-8"), fmt="py:percent")
    notebook.metadata.pop("jupytext", None)
    kernelspec = dict(notebook.metadata.get("kernelspec", {}))
    for number, cell in enumerate(notebook.cells, 1):
        cell.id = f"{source.stem}-{number}"
    try:
        NotebookClient(notebook, timeout=timeout, kernel_name=KERNEL, record_timing=False,
                       resources={"metadata": {"path": str(ROOT)}}).execute()
    except CellExecutionError as error:
        raise EngineError(f"notebooks/{source.name}: a cell failed: {error.ename}: "
                          f"{error.evalue}") from None
    except (CellTimeoutError, DeadKernelError) as error:
        raise EngineError(f"notebooks/{source.name}: {error}") from None
    notebook.metadata["kernelspec"] = kernelspec
    notebook.metadata["language_info"] = {"name": "python"}
    return nbformat.writes(notebook).encode() + b"\n"
