"""Reproducible builds: two clean builds of the same inputs give byte-identical trees.

Two checks. The first compares the session's site (tests/site_support.py) with a second build
from a separate copy of the same trace into a different folder. The second runs the whole
pipeline twice from the engine, each time with its own empty ``--build-dir`` (so the engine,
the diagrams and the cache all start cold) and compares those. Both compare file lists and
the sha256 of every file; on a mismatch they name each differing file and its first
differing line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import site_support

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_support.built_site(tmp_path_factory)


def first_difference(a: Path, b: Path) -> str:
    """The first differing line of two files, or the first differing byte of binary ones."""
    left, right = a.read_bytes(), b.read_bytes()
    try:
        lines_a, lines_b = left.decode().splitlines(), right.decode().splitlines()
    except UnicodeDecodeError:
        at = next((i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
                  min(len(left), len(right)))
        why = " (the gzip header's mtime)" if a.suffix == ".gz" and 4 <= at < 8 else ""
        return f"first differing byte at offset {at}{why} ({len(left)} vs {len(right)} bytes)"
    for number, (x, y) in enumerate(zip(lines_a, lines_b, strict=False), start=1):
        if x != y:
            return f"line {number}:\n  - {x[:300]}\n  + {y[:300]}"
    return f"one file is a prefix of the other ({len(lines_a)} vs {len(lines_b)} lines)"


def compare_trees(first: Path, second: Path) -> None:
    one, two = site_support.tree_digest(first), site_support.tree_digest(second)
    report = []
    for name in sorted(one.keys() ^ two.keys()):
        report.append(f"only in {'first' if name in one else 'second'} build: {name}")
    for name in sorted(one.keys() & two.keys()):
        if one[name] != two[name]:
            report.append(f"{name} differs, {first_difference(first / name, second / name)}")
    assert report == [], "builds differ:\n" + "\n".join(report)
    assert len(one) > 10


def test_two_clean_builds_are_byte_identical(built_site: Path, tmp_path: Path) -> None:
    trace = tmp_path / "copy" / "residual-connections-v1.trace"
    trace.parent.mkdir()
    trace.write_text(site_support.golden_text(), encoding="utf-8")
    compare_trees(built_site, site_support.build_or_fail(trace, tmp_path / "elsewhere" / "site"))


def cold_engine_build(base: Path) -> Path:
    out = base / "site"
    done = subprocess.run(
        [sys.executable, str(site_support.ROOT / "build_site.py"), "build",
         "--build-dir", str(base / "build"), "--out", str(out)],
        cwd=site_support.ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(cache miss)" in done.stdout, "the build was not cold:\n" + done.stdout
    return out


def test_two_cold_engine_builds_are_byte_identical(tmp_path: Path) -> None:
    compare_trees(cold_engine_build(tmp_path / "one"), cold_engine_build(tmp_path / "two"))


def test_the_comparison_fails_on_any_difference(tmp_path: Path) -> None:
    # The gate itself must be able to fail: one changed line, one missing file.
    one, two = tmp_path / "one", tmp_path / "two"
    for root in (one, two):
        root.mkdir()
        for number in range(12):
            (root / f"page{number}.html").write_text(f"<p>page {number}</p>\n")
    (two / "page3.html").write_text("<p>page 3, built at 12:00</p>\n")
    (two / "page7.html").unlink()
    with pytest.raises(AssertionError) as failed:
        compare_trees(one, two)
    message = str(failed.value)
    assert "only in first build: page7.html" in message
    assert "page3.html differs, line 1:" in message and "built at 12:00" in message
