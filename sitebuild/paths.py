"""File names and default locations shared by the build command and the MkDocs hook.

Contract: the one definition of where traces and the learner report live (as the engine writes
them into ``build/trace/`` and as the site publishes them under ``trace/``), of the default
``build/`` layout (relative to the project root), of the names of a build's temporary folders
(``temp_prefix``, recognised by ``TEMPORARY``) and of ``BuildSettings``, what the build hands
the MkDocs hook on the loaded config (``config.extra[SETTINGS_KEY]``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracefile import SCHEMAS, TraceSet
from tracefile.schemas import CHAPTER_TRACE as CHAPTER_TRACE  # re-exported: pages' default

REPORT_NAME = "learner-report.txt"
TRACE_DIR = "build/trace"
DEFAULT_GENERATED = "build/generated"
DEFAULT_REPORT = f"{TRACE_DIR}/{REPORT_NAME}"


#: Temporary folders a build makes (engine runs, cache entries being written, generated files
#: and the site being assembled, a replaced folder): each name carries ``-pid<PID>``, so the
#: next build can tell a dead build's leftovers from a live one's work.
TEMPORARY = re.compile(r"(?:\.[\w.-]*?-|engine-)pid(\d+)(?:-.*)?")


def temp_prefix(name: str) -> str:
    """The prefix of a temporary folder's name: recognisable, and naming this process."""
    return f"{name}-pid{os.getpid()}-"


def trace_file(trace_id: str) -> str:
    """The file name of a trace (``residual-connections-v2.trace``)."""
    return SCHEMAS[trace_id].file_name


def trace_url(trace_id: str) -> str:
    """Where the site publishes a trace (the Trace page links to it)."""
    return f"trace/{trace_file(trace_id)}"


@dataclass(frozen=True)
class BuildSettings:
    """What ``build_site.py`` tells the hook: where the traces, report and figures are."""

    traces: dict[str, Path]
    report: Path | None
    generated: Path
    #: True when the caller has already brought ``generated`` up to date.
    generated_ready: bool = True
    #: Traces that differ from a fresh engine run; every page then says so.
    unverified: tuple[str, ...] = ()
    #: The traces as the caller already parsed them from ``traces`` (the hook then does not
    #: parse them again); ``None``: the hook parses the files.
    parsed: TraceSet | None = None
    #: A long-lived process's memo of rendered pages (``sitebuild.warm``), which the hook
    #: keeps each page's rendering and each figure it puts in under everything they read.
    page_memo: dict[Any, Any] | None = None
    #: The generated files while they are still being drawn (``sitebuild.drawing.Drawing``):
    #: the hook reads them from here, waiting for a chart a page needs; ``None``: from
    #: ``generated``.
    drawing: Any = None


SETTINGS_KEY = "build"
