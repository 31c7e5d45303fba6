"""Tests for sitebuild/freshness.py's list of installed distributions: kept while the
metadata folders on ``sys.path`` are the same, read again when one changes."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest

from sitebuild import freshness


def test_the_installed_versions_name_every_distribution() -> None:
    listed = freshness.installed_versions().splitlines()
    assert listed == sorted(listed)
    assert f"mkdocs=={metadata.version('mkdocs')}" in listed


def test_installed_versions_are_read_again_when_a_metadata_folder_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    (site / "alpha-1.0.dist-info").mkdir(parents=True)
    monkeypatch.setattr("sys.path", [str(site)])
    freshness._versions.cache_clear()
    installed = [SimpleNamespace(metadata={"Name": "alpha"}, version="1.0")]
    monkeypatch.setattr(metadata, "distributions", lambda: list(installed))
    assert freshness.installed_versions() == "alpha==1.0"
    installed.append(SimpleNamespace(metadata={"Name": "beta"}, version="2.0"))
    assert freshness.installed_versions() == "alpha==1.0"  # the same folders: kept
    (site / "beta-2.0.dist-info").mkdir()
    assert freshness.installed_versions() == "alpha==1.0\nbeta==2.0"
    freshness._versions.cache_clear()  # the next test reads the real folders afresh
