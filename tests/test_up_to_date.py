"""Tests for sitebuild/up_to_date.py: the site key follows every input, and a published site
is up to date only while it holds exactly what was published."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from sitebuild import up_to_date
from tracefile import TraceSet


def test_the_installed_versions_name_every_distribution() -> None:
    listed = up_to_date.installed_versions().splitlines()
    assert listed == sorted(listed)
    assert f"mkdocs=={metadata.version('mkdocs')}" in listed


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for folder in ("docs", "engine", "sitebuild"):
        (root / folder).mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# A page\n")
    (root / "engine" / "listed.py").write_text("def shown_on_a_page(): ...\n")
    (root / "sitebuild" / "build.py").write_text("# the build\n")
    (root / "mkdocs.yml").write_text("site_name: x\n")
    return root


def test_the_site_key_follows_traces_pages_settings_and_options(
        tmp_path: Path, golden_traces: TraceSet) -> None:
    root = fake_root(tmp_path)

    def key(options: str = "mkdocs", report: bytes | None = b"r") -> str:
        return up_to_date.site_key(root, golden_traces, report, "generated", options)

    before = key()
    assert key() == before
    assert key("zensical") != before and key(report=None) != before
    (root / "docs" / "index.md").write_text("# An edited page\n")
    assert key() != before
    edited = key()
    for edit in ("mkdocs.yml", "engine/listed.py", "sitebuild/build.py"):
        (root / edit).write_text((root / edit).read_text() + "# edited\n")
        assert key() != edited, edit  # a listing's source: the page shows it
        edited = key()
    assert up_to_date.site_key(root, golden_traces, b"r", "generated", "mkdocs") == edited
    assert up_to_date.site_key(root, golden_traces, b"r", "other generated", "mkdocs") != edited


def test_a_site_is_up_to_date_only_while_it_is_what_was_published(tmp_path: Path) -> None:
    build_dir, out = tmp_path / "build", tmp_path / "site"
    build_dir.mkdir()
    out.mkdir()
    (out / "index.html").write_text("<p>published</p>")
    assert not up_to_date.is_up_to_date(build_dir, out, "k")
    up_to_date.record(build_dir, out, "k")
    assert up_to_date.is_up_to_date(build_dir, out, "k")
    assert not up_to_date.is_up_to_date(build_dir, out, "other")
    (out / "index.html").write_text("<p>tampered</p>")
    assert not up_to_date.is_up_to_date(build_dir, out, "k")
