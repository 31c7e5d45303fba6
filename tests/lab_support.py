"""What the labs' tests share: where the gradients lab's page is, the traces a built site
published (`lab_traces(site)`), and the check of a lab's verdicts table
(`check_verdict_rows(page, count)`). The site itself is the session's build (conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path

from site_support import published_traces

from tracefile import TraceSet

LAB_PAGE = "labs/gradient-flow.html"
LAB_TRACE = "gradient-flow-v4"


def lab_traces(site: Path) -> TraceSet:
    """Every trace the site published (under trace/), the lab's by default."""
    return published_traces(site, LAB_TRACE)


def check_verdict_rows(page: str, count: int) -> None:
    """A lab page's verdicts table has ``count`` rows, each giving the traced numbers that
    decided its verdict and linking to the rule and values behind it."""
    start = page.index('id="table-verdicts"')
    body = page[page.index("<tbody>", start):page.index("</tbody>", start)]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == count
    for row in rows:
        reason = re.search(r'<small class="claim-reason">(.*?)</small>', row, re.S)
        assert reason and re.search(r'class="tv"[^>]*>[^<]*\d', reason.group(1)), row[:200]
        assert re.search(r'href="#why-[a-z-]+"', row), row[:200]
