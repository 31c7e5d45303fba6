"""What the gradients lab's tests share: where the lab page is, and the traces a built site
published (`lab_traces(site)`). The site itself is the session's build (conftest.py)."""

from __future__ import annotations

from pathlib import Path

from site_support import published_traces

from tracefile import TraceSet

LAB_PAGE = "labs/gradient-flow.html"
LAB_TRACE = "gradient-flow-v4"


def lab_traces(site: Path) -> TraceSet:
    """Every trace the site published (under trace/), the lab's by default."""
    return published_traces(site, LAB_TRACE)
