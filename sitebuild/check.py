"""The check command: a built site held to what the build makes from the engine's runs.

Contract: ``check(root, site, options, progress, fresh)`` runs the gates on ``site`` against
the engine's run of every trace (a ``--trace`` file must equal it) and compares every file of
the site with the site the build makes from those runs (``gates.rebuilt``); it prints each
finding and returns 1 when there is any, 0 otherwise. It publishes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sitebuild import build_folder, gates, pdf, publish
from sitebuild.build import Options, drawn_svgs, engine_and_traces, pages, read_report, site_files
from sitebuild.engine_runs import CELL_CACHE
from sitebuild.errors import BuildError
from sitebuild.gates.rebuilt import compare_sites
from sitebuild.paths import REPORT_NAME, served_path, shown, temp_prefix
from sitebuild.progress import Progress

#: Why a --trace file must equal the engine's run, for check.
CHECK_PURPOSE = "check compares sites with what the engine computes"


def check(root: Path, site: Path, options: Options, progress: Progress,
          fresh: bool = False) -> int:
    """Run the gates on ``site`` against the engine's run of every trace, and hold each of its
    files to the site the build makes from those runs (``gates.rebuilt``); print the findings.
    The runs come from the records or the cache, and the output names those that did, unless
    ``fresh``: then every run is made anew, its training cells too, in a temporary cache.
    The site is rebuilt for the address it names (its canonical link) unless ``--site-url``
    names one, and with its PDF edition when it has one."""
    if not (site / "index.html").is_file():
        raise BuildError(shown(site), "no built site here (no index.html); "
                         "run `python build_site.py build` first")
    options = dataclasses.replace(options, pdf=(site / pdf.EDITION).is_file(),
                                  site_url=options.site_url or site_address(site))
    os.environ["SOURCE_DATE_EPOCH"] = build_folder.source_date_epoch(root)
    with build_folder.exclusive(options.build_dir), contextlib.ExitStack() as stack:
        if fresh:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix=temp_prefix("fresh"), dir=options.build_dir)))
            stack.enter_context(_environment(CELL_CACHE, str(scratch / "cells")))
            options = dataclasses.replace(options, cache_dir=scratch, fresh=True)
        inputs = engine_and_traces(root, options, progress, CHECK_PURPOSE)
        # Every --trace equals the engine's run, so the engine's report describes it.
        inputs = dataclasses.replace(inputs, report=read_report(
            options.build_dir / "trace" / REPORT_NAME))
        context = pages(root, options, inputs, progress)
        rebuilt = Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix=temp_prefix("rebuilt"), dir=options.build_dir))) / "site"
        site_files(root, options, context, rebuilt, progress)
        publish.list_site(rebuilt)
        if inputs.cached:
            print(f"[check] checked against the recorded or cached results of "
                  f"{', '.join(inputs.cached)} (records/, {shown(options.cache.root)}), not "
                  "fresh runs: --fresh reruns the engine", flush=True)
        with progress.phase("gates") as notes:
            findings = gates.run_gates(site, inputs.traces, context.references,
                                       drawn_svgs(context), base=served_path(options.site_url),
                                       shown_as=shown(site), docs_dir=root / "docs")
            findings += [finding.shown_as(shown(site), None)
                         for finding in compare_sites(site, rebuilt)]
            notes.append(f"{len(findings)} finding(s)" if findings else "no findings")
    for finding in findings:
        print(str(finding))
        for line in finding.detail.splitlines():  # a diff, indented under its finding
            print(f"    {line}")
    return 1 if findings else 0


def site_address(site: Path) -> str | None:
    """The address a built site was built for, from its front page's canonical link (MkDocs
    writes one only for a site built with an address); None without one."""
    html = (site / "index.html").read_text(encoding="utf-8", errors="replace")
    found = _CANONICAL.search(html)
    return found.group(1).removesuffix("index.html") if found else None


_CANONICAL = re.compile(r'<link rel="canonical" href="([^"]+)"')


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """``name`` set to ``value`` in this process's environment (so in the engine's) for a
    while."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
