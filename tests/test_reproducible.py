"""Reproducible builds: two clean builds of the same inputs give byte-identical trees.

The session's site (tests/site_support.py) is one build; this test makes a second one into a
different folder from a separate copy of the same trace and compares file lists and the sha256
of every file. On a mismatch it names each differing file and its first differing line.
"""

from __future__ import annotations

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


def test_two_clean_builds_are_byte_identical(built_site: Path, tmp_path: Path) -> None:
    trace = tmp_path / "copy" / "residual-connections-v1.trace"
    trace.parent.mkdir()
    trace.write_text(site_support.golden_text(), encoding="utf-8")
    second = site_support.build_or_fail(trace, tmp_path / "elsewhere" / "site")
    one, two = site_support.tree_digest(built_site), site_support.tree_digest(second)
    report = []
    for name in sorted(one.keys() ^ two.keys()):
        report.append(f"only in {'first' if name in one else 'second'} build: {name}")
    for name in sorted(one.keys() & two.keys()):
        if one[name] != two[name]:
            report.append(f"{name} differs, {first_difference(built_site / name, second / name)}")
    assert report == [], "builds differ:\n" + "\n".join(report)
    assert len(one) > 10
