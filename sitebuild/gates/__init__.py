"""The site gates: checks that make a wrong page impossible to publish.

Contract: `run_gates(site_dir, traces, references=None, rendered=None, base="/", memo=None)`
runs every static gate over a built site and returns the findings, sorted by page and line; an
empty list means the site may be published. `references` is the bibliography the audit accepts
citations from (default: the project's `mkdocs.yml` `extra.references`); `rendered`, the
diagrams this build drew from `traces` (the figure check reuses them instead of drawing again);
`base`, the site's URL path; `memo`, a long-lived process's per-page findings
(`sitebuild.warm`), which the audit and the links gate reuse for a page whose HTML and inputs
are unchanged. Without a memo the links gate runs in a worker process beside the audit when
that pays (`sitebuild.workers`): each parses every page, and together they are most of the
gates' time. Findings name pages relative to the site; the caller names the site folder in
messages (`shown_as`, default "site") and the Markdown folder that names each finding's source
page (`docs_dir`, default the project's `docs/`).
`build_site.py build` runs it on the temporary site before moving it into place, and
`build_site.py check` on an existing site. The gates never raise on a broken page and never
touch the network (a site that cannot be read at all raises `GateError`):
- "audit" (`sitebuild.gates.audit`): every number in the article comes from the trace, and
  every inline diagram reads exactly like its diagram re-rendered from the trace;
- "links" (`sitebuild.gates.links`): internal links, images and anchors resolve, and no
  resource is fetched from another host;
- "trace" (`sitebuild.gates.published`): the published trace and the Trace page's raw
  listing are the checked trace, byte for byte.
The audit's helpers: `sitebuild.gates.figures` (each inline diagram against the trace's),
`sitebuild.gates.bibliography` (the citations it accepts); the audit's and the links gate's
reader under a memo, which replays a page's unchanged figures: `sitebuild.gates.islands`;
every gate's vocabulary
(`Finding`, the walk over pages, what a code listing is): `sitebuild.gates.pages`.
The browser, reproducibility and bad-input gates need a browser or whole builds; they live
in the test suite (`tests/test_browser.py`, `tests/test_reproducible.py`,
`tests/test_bad_input.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from sitebuild.citations import Reference
from sitebuild.gates import audit, links, published
from sitebuild.gates.bibliography import ROOT
from sitebuild.gates.pages import Finding, html_pages
from sitebuild.workers import worker_pool
from tracefile import Trace, TraceSet

__all__ = ["Finding", "run_gates"]


def run_gates(site_dir: Path, traces: Trace | TraceSet,
              references: Mapping[str, Reference] | None = None,
              rendered: Mapping[str, str] | None = None, base: str = "/",
              *, shown_as: str = "site", docs_dir: Path | None = ROOT / "docs",
              memo: MutableMapping[Any, Any] | None = None) -> list[Finding]:
    """Run the audit, link and published-trace gates over the site under `site_dir`."""
    site_dir = Path(site_dir)
    if next(html_pages(site_dir), None) is None:
        findings = [Finding(".", None, "site", f"no HTML page under {site_dir}")]
    elif memo is not None:  # pages seen before cost a digest, so one process is quicker
        findings = (audit.audit_site(site_dir, traces, references, rendered, memo)
                    + links.check_links(site_dir, base, memo)
                    + published.check_published(site_dir, traces))
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
