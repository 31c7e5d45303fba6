"""Tests for the atomic publish in sitebuild/publish.py.

A published site is a release folder beside the link that names it: publishing over a
previous site leaves the link, the new release and nothing else; the link is replaced in one
``os.replace``, so the site never stops existing; a failed move leaves the old site in place.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitebuild import publish
from sitebuild.errors import BuildError


def site(folder: Path, marker: str) -> Path:
    """A minimal published site whose index says ``marker``."""
    (folder / "assets").mkdir(parents=True)
    (folder / "index.html").write_text(marker)
    (folder / "assets" / "x.css").write_text(marker)
    (folder / publish.PUBLISHED_FILES).write_text("assets/x.css\nindex.html\n")
    return folder


def published(tmp_path: Path) -> tuple[Path, Path]:
    """A new site to publish over an old one published by ``publish``."""
    out = tmp_path / "site"
    (tmp_path / "build").mkdir()
    publish.publish(site(tmp_path / "build" / ".site-tmp-0", "old"), out)
    return site(tmp_path / "build" / ".site-tmp-1", "new"), out


def assert_only_new(tmp_path: Path, out: Path) -> None:
    assert (out / "index.html").read_text() == "new"
    assert (out / "assets" / "x.css").read_text() == "new"
    release = os.readlink(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([release, "build", "site"])
    assert release.startswith(".site-release-") and out.is_symlink()
    assert list((tmp_path / "build").iterdir()) == []


def test_publish_over_a_site_replaces_one_link(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    tmp, out = published(tmp_path)
    old = out.resolve()
    replaced: list[tuple[str, str]] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        replaced.append((Path(src).name, Path(dst).name))
        assert (Path(dst) / "index.html").read_text() == "old"  # whole until the one step
        real(src, dst)

    monkeypatch.setattr(publish.os, "replace", spy)
    publish.publish(tmp, out)
    assert [dst for _, dst in replaced] == ["site"]
    assert_only_new(tmp_path, out)
    assert not old.exists()  # the previous release is gone once the link names the new one


def test_publish_into_nothing_makes_the_link(tmp_path: Path) -> None:
    tmp = site(tmp_path / "build" / ".site-tmp-1", "new")
    out = tmp_path / "site"
    publish.publish(tmp, out)
    assert_only_new(tmp_path, out)


def test_a_site_folder_from_before_releases_is_replaced_by_a_link(tmp_path: Path) -> None:
    out = site(tmp_path / "site", "old")
    (tmp_path / "build").mkdir()
    publish.publish(site(tmp_path / "build" / ".site-tmp-1", "new"), out)
    assert_only_new(tmp_path, out)


def test_a_release_a_killed_build_left_is_removed(tmp_path: Path) -> None:
    tmp, out = published(tmp_path)
    site(tmp_path / ".site-release-killed", "half")
    publish.publish(tmp, out)
    assert_only_new(tmp_path, out)


def test_a_failed_move_leaves_the_old_site(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    tmp, out = published(tmp_path)

    def refused(src: str, dst: str) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(publish.os, "replace", refused)
    with pytest.raises(BuildError, match="cannot move the new site into place"):
        publish.publish(tmp, out)
    assert (out / "index.html").read_text() == "old"


def test_a_link_this_build_did_not_make_is_refused(tmp_path: Path) -> None:
    mine = site(tmp_path / "mine", "mine")
    out = tmp_path / "site"
    out.symlink_to(mine)
    with pytest.raises(BuildError, match="is a link this build did not make"):
        publish.publish(site(tmp_path / "new", "new"), out)
    assert (mine / "index.html").read_text() == "mine" and out.resolve() == mine


def test_a_file_added_to_a_release_is_never_deleted(tmp_path: Path) -> None:
    tmp, out = published(tmp_path)
    (out / "assets" / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match=r"notes\.txt: is not a file this build published"):
        publish.publish(tmp, out)
    assert (out / "assets" / "notes.txt").read_text() == "mine"


def test_publish_refuses_a_folder_that_is_not_a_site(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match="is not a site this build published"):
        publish.publish(site(tmp_path / "new", "new"), out)
    assert (out / "notes.txt").read_text() == "mine"


def test_an_index_html_does_not_make_a_folder_a_site(tmp_path: Path) -> None:
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "index.html").write_text("x")
    (out / "thesis.tex").write_text("work")
    with pytest.raises(BuildError, match="is not a site this build published"):
        publish.publish(site(tmp_path / "new", "new"), out)
    assert (out / "thesis.tex").read_text() == "work"


def test_a_file_added_to_a_published_site_is_never_deleted(tmp_path: Path) -> None:
    out = site(tmp_path / "site", "old")  # a site from before releases, a folder
    (out / "assets" / "notes.txt").write_text("mine")
    new = site(tmp_path / "new", "new")
    with pytest.raises(BuildError, match=r"notes\.txt: is not a file this build published"):
        publish.publish(new, out)
    assert (out / "assets" / "notes.txt").read_text() == "mine"
    (out / "assets" / "notes.txt").unlink()
    publish.publish(new, out)  # its own files only: replaced
    assert (out / publish.PUBLISHED_FILES).read_text() == "assets/x.css\nindex.html\n"


def test_an_empty_folder_may_be_replaced(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    publish.publish(site(tmp_path / "new", "new"), tmp_path / "empty")
    assert (tmp_path / "empty" / "index.html").read_text() == "new"


def test_a_listed_folder_is_replaced_whole_and_never_deletes_a_file_it_did_not_make(
        tmp_path: Path) -> None:
    target = tmp_path / "trace"
    publish.write_folder(target, {"a.trace": b"a"}, listed=True)
    publish.write_folder(target, {"b.trace": b"b"}, listed=True)  # its own file goes
    assert sorted(p.name for p in target.iterdir()) == [publish.PUBLISHED_FILES, "b.trace"]
    (target / "notes.txt").write_text("the user's")
    with pytest.raises(BuildError, match=r"trace/notes\.txt: is not a file the build made"):
        publish.write_folder(target, {"c.trace": b"c"}, listed=True)
    assert (target / "notes.txt").read_text() == "the user's"
    assert (target / "b.trace").read_bytes() == b"b"


def test_a_folder_from_before_builds_kept_a_list_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "old.svg").write_text("<svg/>")
    publish.write_folder(tmp_path / "generated", {"new.svg": b"<svg/>"}, listed=True)
    assert not (tmp_path / "generated" / "old.svg").exists()


def test_an_unchanged_list_is_not_written_again(tmp_path: Path) -> None:
    publish.write_listing(tmp_path, ["a.md"])
    listed = tmp_path / publish.PUBLISHED_FILES
    os.utime(listed, (0, 0))
    publish.write_listing(tmp_path, ["a.md"])  # a watcher of the folder must not wake
    assert listed.stat().st_mtime == 0
    publish.write_listing(tmp_path, ["a.md", "b.md"])
    assert listed.read_text() == "a.md\nb.md\n"
