"""File names and default locations shared by the build command and the MkDocs hook.

Contract: the one definition of the trace's and learner report's file names (as the
engine writes them and as the site publishes them) and of the default ``build/`` layout.
Paths here are relative to the project root.
"""

from __future__ import annotations

TRACE_NAME = "residual-connections-v1.trace"
REPORT_NAME = "learner-report.txt"
DEFAULT_TRACE = f"build/trace/{TRACE_NAME}"
DEFAULT_REPORT = f"build/trace/{REPORT_NAME}"
DEFAULT_GENERATED = "build/generated"
#: Where the site publishes the raw trace (the Trace page links to it).
TRACE_URL = f"trace/{TRACE_NAME}"
