"""Tests for the atomic publish in sitebuild/publish.py.

Publishing over a previous site must leave exactly the new site and nothing beside it,
whether the swap is one `renameat2(RENAME_EXCHANGE)` (Linux) or the two-rename fallback
used where the system cannot exchange; a failed move leaves the old site in place.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
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
    out = site(tmp_path / "site", "old")
    tmp = site(tmp_path / "build" / ".site-tmp-1", "new")
    return tmp, out


def assert_only_new(tmp_path: Path, out: Path) -> None:
    assert (out / "index.html").read_text() == "new"
    assert (out / "assets" / "x.css").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "site"]
    assert list((tmp_path / "build").iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux-only")
def test_publish_over_a_site_is_one_exchange(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    probe_a, probe_b = site(tmp_path / "probe-a", "A"), site(tmp_path / "probe-b", "B")
    if not publish._exchange(probe_a, probe_b):
        pytest.skip("this file system cannot exchange two paths (the fallback is tested below)")
    shutil.rmtree(probe_a)
    shutil.rmtree(probe_b)
    tmp, out = published(tmp_path)
    calls: list[tuple[Path, Path]] = []
    real = publish._exchange

    def spy(a: Path, b: Path, what: str = "folder") -> bool:
        calls.append((a, b))
        return real(a, b, what)

    monkeypatch.setattr(publish, "_exchange", spy)
    monkeypatch.setattr(Path, "rename", lambda *a: pytest.fail("fell back to renames"))
    publish.publish(tmp, out)
    assert calls == [(tmp, out)]
    assert_only_new(tmp_path, out)


def test_exchange_swaps_two_folders(tmp_path: Path) -> None:
    a, b = site(tmp_path / "a", "A"), site(tmp_path / "b", "B")
    if not publish._exchange(a, b):
        pytest.skip("this system cannot exchange two paths")
    assert (a / "index.html").read_text() == "B" and (b / "index.html").read_text() == "A"


@pytest.mark.parametrize("code", [errno.ENOSYS, errno.EINVAL])
def test_without_exchange_publish_falls_back_to_two_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    def unsupported(*args: object) -> int:
        publish.ctypes.set_errno(code)
        return -1

    monkeypatch.setattr(publish, "_renameat2", lambda: unsupported)
    tmp, out = published(tmp_path)
    publish.publish(tmp, out)
    assert_only_new(tmp_path, out)


def test_publish_off_linux_uses_renames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publish.sys, "platform", "darwin")
    assert publish._renameat2() is None
    tmp, out = published(tmp_path)
    publish.publish(tmp, out)
    assert_only_new(tmp_path, out)


def test_publish_into_nothing_is_a_rename(tmp_path: Path) -> None:
    tmp = site(tmp_path / "build" / ".site-tmp-1", "new")
    out = tmp_path / "site"
    publish.publish(tmp, out)
    assert_only_new(tmp_path, out)


def test_a_failed_exchange_leaves_the_old_site(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> int:
        publish.ctypes.set_errno(errno.EXDEV)
        return -1

    monkeypatch.setattr(publish, "_renameat2", lambda: refused)
    tmp, out = published(tmp_path)
    with pytest.raises(BuildError, match="cannot move the new site into place"):
        publish.publish(tmp, out)
    assert (out / "index.html").read_text() == "old"


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
    tmp, out = published(tmp_path)
    (out / "assets" / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match=r"notes\.txt: is not a file this build published"):
        publish.publish(tmp, out)
    assert (out / "assets" / "notes.txt").read_text() == "mine"
    (out / "assets" / "notes.txt").unlink()
    publish.publish(tmp, out)  # its own files only: replaced, with the new list
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
