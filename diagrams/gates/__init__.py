"""The site gates: checks that make a wrong page impossible to publish.

Contract: `run_gates(site_dir, trace)` runs every static gate over a built site and returns
the findings, sorted by page and line; an empty list means the site may be published.
`build_site.py build` runs it on the temporary site before moving it into place, and
`build_site.py check` on an existing site. The gates never raise on a broken page and never
touch the network:
- "audit" (`diagrams.gates.audit`): every number in the article comes from the trace;
- "links" (`diagrams.gates.links`): internal links, images and anchors resolve, and no
  resource is fetched from another host.
The browser, reproducibility and bad-input gates need a browser or whole builds; they live
in the test suite (`tests/test_browser.py`, `tests/test_reproducible.py`,
`tests/test_bad_input.py`).
"""

from __future__ import annotations

from pathlib import Path

from diagrams.gates import audit, links
from diagrams.gates.pages import Finding, html_pages
from diagrams.trace import Trace

__all__ = ["Finding", "run_gates"]


def run_gates(site_dir: Path, trace: Trace) -> list[Finding]:
    """Run the audit and link gates over the HTML under `site_dir`."""
    site_dir = Path(site_dir)
    if next(html_pages(site_dir), None) is None:
        return [Finding(".", None, "site", f"no HTML page under {site_dir}")]
    # Called through the modules so a test can replace one gate to prove the build obeys it.
    findings = audit.audit_site(site_dir, trace) + links.check_links(site_dir)
    return sorted(findings, key=Finding.sort_key)
