"""The site gates: checks that make a wrong page impossible to publish.

Contract: ``run_gates(site_dir, traces, ...)`` runs every static gate over a built site and
returns the findings sorted by page and line (none: it may be published), never raising on a
broken page and never touching the network: "audit" (``gates.audit`` with ``gates.figures``),
"links" (``gates.links``) and "trace" (``gates.published``); ``gates.pages`` holds what
they share. ``gates.rebuilt`` compares a site with a rebuild of it, for ``check``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sitebuild.citations import Reference
from sitebuild.gates import audit, links, published
from sitebuild.gates.pages import Finding, html_pages
from sitebuild.paths import ROOT
from tracefile import Trace, TraceSet

__all__ = ["Finding", "run_gates"]


def run_gates(site_dir: Path, traces: Trace | TraceSet,
              references: Mapping[str, Reference] | None = None,
              rendered: Mapping[str, str] | None = None, base: str = "/",
              *, shown_as: str = "site", docs_dir: Path | None = ROOT / "docs") -> list[Finding]:
    """Run the audit, link and published-trace gates over the site under `site_dir`."""
    site_dir = Path(site_dir)
    if next(html_pages(site_dir), None) is None:
        findings = [Finding(".", None, "site", f"no HTML page under {site_dir}")]
    else:
        findings = (audit.audit_site(site_dir, traces, references, rendered)
                    + links.check_links(site_dir, base)
                    + published.check_published(site_dir, traces))
    return sorted((f.shown_as(shown_as, docs_dir) for f in findings), key=Finding.sort_key)

