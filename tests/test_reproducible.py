"""Reproducible builds: two clean builds of the same chapter give byte-identical trees.

The session's site (tests/conftest.py: built from the recorded trace and learner report given
with ``--trace`` and ``--report``) is compared with the README's ``./dev build``, which reads
the records from an empty ``--build-dir`` into another folder: the diagrams and the cache all
start cold, the inputs are written afresh and the output goes elsewhere, yet every file must
be the same: `sitebuild.gates.rebuilt`'s comparison, which `check` holds a site to, names
each differing file and its first differing line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from site_support import BuiltSite

from sitebuild.gates.rebuilt import compare_sites, site_files

PHASES = ("engine", "generate")

def compare_trees(first: Path, second: Path) -> None:
    """The two sites are the same files, byte for byte (the rule `check` holds a site to)."""
    findings = compare_sites(first, second)
    assert findings == [], "builds differ:\n" + "\n".join(map(str, findings))
    assert len(site_files(first)) > 10


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
    assert "page7.html: [rebuilt] is not in the site" in message
    assert "page3.html:1: [rebuilt] differs" in message and "built at 12:00" in message
