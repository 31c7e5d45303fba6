"""Reproducible builds: two clean builds of the same chapter give byte-identical trees.

The session's site (tests/conftest.py: built from the recorded trace and learner report given
with ``--trace`` and ``--report``) is compared with the README's ``./dev build``, which reads
the records from an empty ``--build-dir`` into another folder: the diagrams and the cache all
start cold, the inputs are written afresh and the output goes elsewhere, yet every file must
be the same. The comparison covers file lists and the sha256 of every file; on a
mismatch it names each differing file and its first differing line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from site_support import BuiltSite, tree_digest

PHASES = ("engine", "generate")

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
    one, two = tree_digest(first), tree_digest(second)
    report = []
    for name in sorted(one.keys() ^ two.keys()):
        report.append(f"only in {'first' if name in one else 'second'} build: {name}")
    for name in sorted(one.keys() & two.keys()):
        if one[name] != two[name]:
            report.append(f"{name} differs, {first_difference(first / name, second / name)}")
    assert report == [], "builds differ:\n" + "\n".join(report)
    assert len(one) > 10


@pytest.mark.slow
def test_a_cold_engine_build_equals_the_golden_build(built_site: Path,
                                                      engine_build: BuiltSite) -> None:
    stdout = engine_build.stdout
    engine, generate = (next(line for line in stdout.splitlines()
                             if line.startswith(f"[build] {phase} ")) for phase in PHASES)
    assert re.search(r"  (\d+) trace\(s\): \1 recorded$", engine), "not recorded:\n" + stdout
    assert generate.endswith("(cache miss)"), "the diagrams were not cold:\n" + stdout
    compare_trees(built_site, engine_build.site)


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
