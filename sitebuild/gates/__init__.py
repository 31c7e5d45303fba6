"""The site gates: checks that make a wrong page impossible to publish.

Contract: `run_gates(site_dir, traces, references=None, rendered=None, base="/")` runs every
static gate over a built site and returns the findings sorted by page and line (empty: it may
be published); `rendered` are the diagrams this build drew, `base` the site's URL path. They
never raise on a broken page and never touch the network: "audit" (`gates.audit`: every
number comes from a trace; with `gates.figures`, every diagram reads like its re-rendering),
"links" (`gates.links`, in a worker beside the audit when that pays) and "trace"
(`gates.published`: the published traces are the checked ones); `gates.pages` holds their
vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sitebuild.citations import Reference
from sitebuild.gates import audit, links, published
from sitebuild.gates.pages import Finding, html_pages
from sitebuild.paths import ROOT
from sitebuild.processes import worker_pool
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
        # Called through the modules so a test can replace one gate to prove the build obeys it
        # (a forked worker inherits the replacement; a forkserver's would not).
        with worker_pool(1) as workers:  # the links gate, while this process audits
            linked = workers.submit(_check_links, site_dir, base) if workers else None
            findings = (audit.audit_site(site_dir, traces, references, rendered)
                        + (linked.result() if linked else _check_links(site_dir, base))
                        + published.check_published(site_dir, traces))
    return sorted((f.shown_as(shown_as, docs_dir) for f in findings), key=Finding.sort_key)


def _check_links(site_dir: Path, base: str) -> list[Finding]:
    return links.check_links(site_dir, base)
