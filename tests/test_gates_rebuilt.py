"""Tests for the rebuilt comparison (sitebuild/gates/rebuilt.py) and `check`'s use of it.

Synthetic folders pin the rule (a file missing, extra or changed is a finding at its first
differing line or byte); the slow test tampers a copy of the really built site the ways the
other gates do not see (a chart's drawn line, the search index, a raw listing's script file
with the true listing kept under another key, a notebook) and runs `check`, which must name
each file. The PDF edition's case is in test_pdf.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from site_support import published_traces
from test_gates_published import check

from diagrams.shown_html import read_shown_html_script, shown_html_script
from sitebuild.gates.published import check_published
from sitebuild.gates.rebuilt import WINDOW, compare_sites
from sitebuild.paths import CHAPTER_TRACE


def write(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_identical_sites_have_no_findings(tmp_path: Path) -> None:
    files = {"index.html": b"<p>one</p>\n", "assets/a.js": b"x = 1;\n", "b.pdf": b"%PDF\x00\xff"}
    assert compare_sites(write(tmp_path / "a", files), write(tmp_path / "b", files)) == []


def test_each_missing_extra_or_changed_file_is_a_finding_at_its_place(tmp_path: Path) -> None:
    built = {"index.html": b"<p>one</p>\n<p>two 0.5</p>\n", "gone.html": b"x\n",
             "b.pdf": b"%PDF\x00\xff\x01"}
    checked = {"index.html": b"<p>one</p>\n<p>two 0.6</p>\n", "extra.txt": b"y\n",
               "b.pdf": b"%PDF\x00\xfe\x01"}
    found = compare_sites(write(tmp_path / "site", checked), write(tmp_path / "re", built))
    shown = {finding.page: (finding.line, finding.message) for finding in found}
    assert set(shown) == {"index.html", "gone.html", "extra.txt", "b.pdf"}
    assert shown["extra.txt"][1].startswith("is not in the site the build makes")
    assert shown["gone.html"][1].startswith("is missing")
    line, message = shown["index.html"]
    assert line == 2 and "'<p>two 0.6</p>' where it has '<p>two 0.5</p>'" in message
    assert shown["b.pdf"] == (None, "differs from the file in the site the build makes from "
                              "the checked traces from its byte 5 (7 against 7 bytes)")


def test_a_long_line_is_shown_around_its_difference(tmp_path: Path) -> None:
    line = "a" * 500 + "0.5" + "b" * 500
    found = compare_sites(write(tmp_path / "site", {"s.json": line.replace("0.5", "0.6")
                                                    .encode()}),
                          write(tmp_path / "re", {"s.json": line.encode()}))
    assert len(found) == 1 and found[0].line == 1
    excerpt = re.search(r"shows '([^']*)'", found[0].message).group(1)
    # The first difference is the "6": the window starts sixty characters before it.
    assert excerpt == "…" + "a" * (WINDOW - 2) + "0.6" + "b" * (WINDOW - 1) + "…"


def _flatten_first_line_chart(page: Path) -> None:
    """The first drawn line of a chart in ``page`` redrawn flat: every y at the first y."""
    html = page.read_text(encoding="utf-8")
    match = next(m for m in re.finditer(r'<path d="(M [^"]*? L [^"]*? L [^"]*)"', html))
    numbers = match.group(1).split()
    first_y = numbers[2]
    flat = [first_y if i % 3 == 2 else word for i, word in enumerate(numbers)]
    assert flat != numbers
    page.write_text(html[:match.start(1)] + " ".join(flat) + html[match.end(1):],
                    encoding="utf-8")


@pytest.mark.slow
def test_check_finds_what_only_a_rebuild_shows(site_copy: Path) -> None:
    _flatten_first_line_chart(site_copy / "labs" / "gradient-flow.html")
    index = site_copy / "search" / "search_index.json"
    text = index.read_text(encoding="utf-8")
    number = re.search(r"\b0\.\d+\b", text)
    index.write_text(text[:number.start()] + "0.999" + text[number.end():], encoding="utf-8")
    listing = next((site_copy / "assets" / "traces").glob("gradient-flow-*.js"))
    name, fragments = read_shown_html_script(listing.read_text(encoding="utf-8"))
    # The true listing kept under another key, the shown one changed: the trace gate finds
    # the true text among the listings, only the rebuild sees the file is not the build's.
    (key, true), = fragments["listing"].items()
    fragments["listing"] = {key: true.replace("verdict=supports", "verdict=contradicts", 1),
                            "kept": true}
    listing.write_text(shown_html_script(name, fragments), encoding="utf-8")
    assert check_published(site_copy, published_traces(site_copy, CHAPTER_TRACE)) == []
    notebook = next((site_copy).rglob("*.ipynb"))
    notebook.write_text(notebook.read_text(encoding="utf-8").replace("seed", "sead", 1),
                        encoding="utf-8")
    done = check("--site", str(site_copy))
    assert done.returncode == 1, done.stdout + done.stderr
    rebuilt = [line for line in done.stdout.splitlines() if "[rebuilt]" in line]
    for changed in ("labs/gradient-flow.html", "search/search_index.json",
                    listing.relative_to(site_copy).as_posix(),
                    notebook.relative_to(site_copy).as_posix()):
        assert any(line.startswith(f"{site_copy}/{changed}:") for line in rebuilt), \
            (changed, done.stdout)
    assert "Traceback" not in done.stderr
