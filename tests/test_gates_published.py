"""Tests for the published-trace gate (sitebuild/gates/published.py) and `build_site.py check`.

A synthetic site pins the rules (download copy and the Trace page's raw listing must equal
the checked trace); the slow tests tamper a copy of a really built site, and run `check`
to prove it checks against the engine's trace in the build folder, not the site's own copy,
and prints the site folder it was given.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from paths import GOLDEN_TRACE, ROOT
from site_support import SHARED_CACHE

from sitebuild import build as site_build
from sitebuild import check as site_check
from sitebuild.engine_runs import CELL_CACHE
from sitebuild.gates.published import check_published
from sitebuild.paths import CHAPTER_TRACE
from sitebuild.progress import Progress
from tracefile import SCHEMAS, Trace

TRACE_NAME = SCHEMAS[CHAPTER_TRACE].file_name


def listing(text: str) -> str:
    """A code listing the way pymdownx.highlight writes a fenced `text` block."""
    return (f'<div class="highlight"><pre><span></span><code>{html.escape(text)}'
            "</code></pre></div>")


@pytest.fixture
def site(tmp_path: Path, trace: Trace) -> Path:
    (tmp_path / "trace").mkdir()
    (tmp_path / "trace" / TRACE_NAME).write_bytes(trace.text.encode("utf-8"))
    body = listing("chapter=24 report") + "\n" + listing(trace.text)
    (tmp_path / "trace.html").write_text(f"<html><body>\n{body}\n</body></html>\n",
                                         encoding="utf-8")
    return tmp_path


def test_faithful_site_passes(site: Path, trace: Trace) -> None:
    assert check_published(site, trace) == []


def test_changed_published_copy_is_reported_with_a_diff(site: Path, trace: Trace) -> None:
    path = site / "trace" / TRACE_NAME
    path.write_text(trace.text.replace("FORWARD input=[2.0,-1.0]", "FORWARD input=[2.0,-1.5]"),
                    encoding="utf-8")
    findings = check_published(site, trace)
    assert len(findings) == 1, findings
    line = trace.text.splitlines().index(
        next(x for x in trace.text.splitlines() if x.startswith("FORWARD "))) + 1
    assert (findings[0].page, findings[0].line, findings[0].gate) == (
        f"trace/{TRACE_NAME}", line, "trace")
    assert "-FORWARD input=[2.0,-1.0]" in findings[0].detail
    assert "+FORWARD input=[2.0,-1.5]" in findings[0].detail
    assert "\n" not in str(findings[0])


@pytest.mark.parametrize("change", ["missing", "crlf", "trailing-byte"])
def test_missing_or_byte_different_copy_is_reported(site: Path, trace: Trace,
                                                    change: str) -> None:
    path = site / "trace" / TRACE_NAME
    if change == "missing":
        path.unlink()
    elif change == "crlf":
        path.write_bytes(trace.text.replace("\n", "\r\n").encode("utf-8"))
    else:
        path.write_bytes(trace.text.encode("utf-8") + b" ")
    findings = check_published(site, trace)
    assert len(findings) == 1 and findings[0].page == f"trace/{TRACE_NAME}", findings


def test_changed_raw_listing_is_reported(site: Path, trace: Trace) -> None:
    page = site / "trace.html"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("REPLAY bitwise=true", "REPLAY bitwise=false"),
                    encoding="utf-8")
    findings = check_published(site, trace)
    assert len(findings) == 1 and findings[0].page == "trace.html", findings
    assert "REPLAY bitwise=false" in findings[0].message
    assert findings[0].line == 3 + trace.text.splitlines().index("REPLAY bitwise=true")


@pytest.mark.parametrize("html_text", [
    "<html><body><p>no listing here</p></body></html>",
    "<html><body><pre>{trace}</pre></body></html>",  # not the highlighter's listing
])
def test_trace_page_without_the_raw_listing_is_reported(site: Path, trace: Trace,
                                                        html_text: str) -> None:
    (site / "trace.html").write_text(html_text.format(trace=html.escape(trace.text)),
                                     encoding="utf-8")
    findings = check_published(site, trace)
    assert len(findings) == 1 and "no code listing shows the raw trace" in findings[0].message


# --- the real site and `build_site.py check` -------------------------------------------


def check(*args: str) -> subprocess.CompletedProcess[str]:
    # check runs the engine (or takes its runs from the cache): the session's shared one. It
    # writes the traces it checks against into its build folder: never the repository's.
    cache = ["--cache-dir", str(SHARED_CACHE["dir"])] if "dir" in SHARED_CACHE else []
    with tempfile.TemporaryDirectory() as build:
        folder = [] if "--build-dir" in args else ["--build-dir", build]
        return subprocess.run([sys.executable, "build_site.py", "check", *cache, *folder, *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_real_site_raw_listing_tamper_is_reported(site_copy: Path, trace: Trace) -> None:
    # The Trace page's fold shows the listing its script file holds.
    assert check_published(site_copy, trace) == []
    data = site_copy / "assets" / "traces" / f"{trace.trace_id}.js"
    text = data.read_text(encoding="utf-8")
    assert text.count("REPLAY bitwise=true") == 1
    data.write_text(text.replace("REPLAY bitwise=true", "REPLAY bitwise=false"),
                    encoding="utf-8")
    findings = check_published(site_copy, trace)
    assert len(findings) == 1 and findings[0].page == "trace.html", findings
    assert "REPLAY bitwise=false" in findings[0].message
    assert f"(shown from assets/traces/{trace.trace_id}.js)" in findings[0].message


@pytest.mark.slow
def test_check_uses_the_engine_trace_and_names_the_given_site(site_copy: Path,
                                                              tmp_path: Path) -> None:
    # Site and published copy tampered consistently: only the engine's trace can tell.
    golden = GOLDEN_TRACE.read_text(encoding="utf-8")
    forged = golden.replace("residual-factor=0.75", "residual-factor=0.5")
    assert forged != golden
    (site_copy / "trace" / TRACE_NAME).write_text(forged, encoding="utf-8")
    build = tmp_path / "build"
    (build / "trace").mkdir(parents=True)
    (build / ".lock").touch()  # a build folder, holding a trace of an earlier build
    (build / "trace" / TRACE_NAME).write_text(golden, encoding="utf-8")
    done = check("--site", str(site_copy), "--build-dir", str(build))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{len(SCHEMAS)} trace(s)" in done.stdout and "[check] engine" in done.stdout
    lines = [x for x in done.stdout.splitlines() if "[trace]" in x]
    assert lines and lines[0].startswith(f"{site_copy}/trace/{TRACE_NAME}:"), done.stdout
    assert "    -STACK-CONFIG" in done.stdout and "    +STACK-CONFIG" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_check_prints_the_site_folder_and_the_source_page(built_site: Path,
                                                         site_copy: Path) -> None:
    untouched = check("--site", str(built_site), "--trace", str(GOLDEN_TRACE))
    assert untouched.returncode == 0, untouched.stdout + untouched.stderr
    assert "no findings" in untouched.stdout
    # The traces come from their records, and check says so.
    assert f"[check] checked against the recorded or cached results of {', '.join(SCHEMAS)}" \
        in untouched.stdout and "--fresh reruns the engine" in untouched.stdout
    page = site_copy / "building.html"
    page.write_text(page.read_text(encoding="utf-8").replace(
        "</article>", "<p>Typed: 0.42</p></article>", 1), encoding="utf-8")
    trace = site_copy / "trace" / TRACE_NAME
    done = check("--site", str(site_copy), "--trace", str(trace))
    assert done.returncode == 1, done.stdout + done.stderr
    finding = next(x for x in done.stdout.splitlines() if "0.42" in x)
    # Typed into the published page, not into its source: the source is named without a line.
    assert finding.startswith("docs/building.md: [audit] untagged number '0.42'"), finding
    assert re.search(rf"\(built into {re.escape(str(site_copy))}/building\.html:\d+\)$",
                     finding), finding


def test_check_help_lists_the_gates() -> None:
    done = check("--help")
    assert done.returncode == 0
    for gate in ("audit", "links", "trace", "rebuilt", "browser", "./dev test"):
        assert gate in done.stdout, gate


@pytest.mark.slow
def test_check_fresh_runs_every_job_without_records_in_a_scratch_cache(
        built_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --fresh must not read the build's cache, nor the engine's cell cache: both scratch.
    seen: list[tuple[Path, str]] = []

    def engine_and_traces(root: Path, options: site_build.Options, *args: object) -> object:
        assert options.fresh  # nor the records
        seen.append((options.cache.root, os.environ[CELL_CACHE]))
        raise site_build.BuildError("engine", "stopped here")

    monkeypatch.setenv(CELL_CACHE, str(tmp_path / "shared-cells"))
    monkeypatch.setattr(site_check, "engine_and_traces", engine_and_traces)
    options = site_build.Options(out=tmp_path / "site", build_dir=tmp_path / "build",
                                 cache_dir=tmp_path / "cache")
    with pytest.raises(site_build.BuildError, match="stopped here"):
        site_check.check(ROOT, built_site, options, Progress("check"), fresh=True)
    [(cache, cells)] = seen
    assert cache.parent == tmp_path / "build" and Path(cells) == cache / "cells"
    assert not cache.exists()  # the scratch cache goes with the check
    assert os.environ[CELL_CACHE] == str(tmp_path / "shared-cells")
