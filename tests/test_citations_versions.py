"""Tests for sitebuild/citations.py: versions a page shows come from the lock, and the audit
accepts a version only as rendered from the lock for the installed package."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from sitebuild.citations import parse_lock, pinned, render_pin
from sitebuild.errors import BuildError
from sitebuild.gates.audit import audit_page
from tracefile import Trace

ROOT = Path(__file__).resolve().parents[1]


def article(body: str) -> str:
    return ('<html><body><article class="md-content__inner md-typeset">\n'
            f"<p>{body}</p>\n</article></body></html>\n")


def test_a_pinned_version_is_the_installed_and_locked_one() -> None:
    assert pinned(ROOT, "mkdocs") == metadata.version("mkdocs")
    assert str(render_pin("MkDocs", "1.6.1")) == (
        '<code class="pinned" data-lock="mkdocs">1.6.1</code>')


def test_a_version_the_lock_does_not_pin_is_refused(tmp_path: Path) -> None:
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "lock.txt").write_text("mkdocs==0.0.1 \\\n    --hash=sha256:0\n")
    with pytest.raises(BuildError, match="not pinned by the lock"):
        pinned(tmp_path, "mkdocs")
    with pytest.raises(BuildError, match="not installed"):
        pinned(ROOT, "no-such-distribution")


def test_the_lock_parser_names_a_bad_line() -> None:
    assert [p.name for p in parse_lock("PyYAML==6.0.4 ; python_version >= '3.11'\n")] == [
        "pyyaml"]
    with pytest.raises(ValueError, match=r"lock:2: expected 'name==version'"):
        parse_lock("numpy==2.4.6\nnumpy>=2\n")


def test_the_audit_accepts_only_versions_rendered_from_the_lock(trace: Trace) -> None:
    real = str(render_pin("mkdocs", pinned(ROOT, "mkdocs")))
    assert audit_page("building.html", article(f"MkDocs {real}"), trace) == []
    forged = real.replace(pinned(ROOT, "mkdocs"), "9.9.9")
    findings = audit_page("building.html", article(f"MkDocs {forged}"), trace)
    assert findings and "not rendered by the site (from mkdocs.yml, requirements/lock.txt" in str(
        findings[0])
