"""Atomic builds and bad input: `build_site.py build --trace BAD --out DIR` fails cleanly.

For each defective trace the build must exit non-zero, print exactly one line
`FILE:LINE: what was wrong` on stderr (no traceback), and leave a previously built `--out`
folder byte-identical (nothing half-written beside it either). Hostile but valid parameter
names must build and show up escaped, never as markup. A failing gate must fail the build the
same way: the audit is replaced in-process by one that always finds something.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
import site_support

pytestmark = pytest.mark.slow

ERROR_LINE = re.compile(r"^\S+:\d+: \S")
PHASE_LINE = re.compile(r"^\S+(:\d+)?: \S")  # a missing tool has no line to point at
# Quotes, markup, an entity, Jinja braces, Markdown and math characters: all legal in a name.
HOSTILE = "q\"u'o<evil>&amp;{{7*7}}{%raw%}\\*_$z$`<!--"


def _golden() -> str:
    return site_support.golden_text()


def _replace(old: str, new: str) -> Callable[[], bytes]:
    def make() -> bytes:
        text = _golden()
        assert old in text, old
        return text.replace(old, new).encode()

    return make


def _duplicate(prefix: str) -> bytes:
    lines = _golden().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    return "".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]).encode()


BAD_TRACES: dict[str, Callable[[], bytes]] = {
    "truncated": lambda: _golden().encode()[: len(_golden()) // 2],
    "wrong-version": _replace("residual-connections-v1", "residual-connections-v2"),
    "nan": lambda: re.sub(r"max-error=\S+", "max-error=nan", _golden()).encode(),
    "nan-in-vector": _replace("FORWARD input=[2.0,-1.0]", "FORWARD input=[2.0,nan]"),
    "duplicate-record": lambda: _duplicate("FORWARD "),
    "wrong-vector-length": _replace("weight=[0.5,-1.0,2.0,0.25]", "weight=[0.5,-1.0,2.0]"),
    "non-utf8": lambda: _golden().encode().replace(b"known-residual", b"known-\xff\xferesidual"),
    "10mb-line": _replace("FORWARD input=[2.0,-1.0]",
                          "FORWARD input=[" + "1.0," * 2_621_440 + "1.0]"),
    "empty": lambda: b"",
    "newline-in-name": _replace("PARAMETER name=residual.branch.weight",
                                "PARAMETER name=residual.branch\n.weight"),
}


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_support.built_site(tmp_path_factory)


@pytest.fixture
def previous_site(built_site: Path, tmp_path: Path) -> Path:
    """A copy of a good build that a failing build must leave alone."""
    return Path(shutil.copytree(built_site, tmp_path / "published" / "site"))


def assert_failed_cleanly(
    done: subprocess.CompletedProcess[str], pattern: re.Pattern[str] = ERROR_LINE
) -> str:
    assert done.returncode != 0, f"build succeeded:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.strip("\n").split("\n")
    assert len(lines) == 1, f"stderr must be one line, got {len(lines)}:\n{done.stderr[:2000]}"
    assert pattern.match(lines[0]), f"not {pattern.pattern}: {lines[0][:300]!r}"
    assert len(lines[0]) < 1000, f"error line is {len(lines[0])} characters long"
    return lines[0]


@pytest.mark.parametrize("case", BAD_TRACES)
def test_bad_trace_fails_cleanly_and_keeps_previous_site(
    case: str, previous_site: Path, tmp_path: Path
) -> None:
    trace = tmp_path / f"{case}.trace"
    trace.write_bytes(BAD_TRACES[case]())
    before = site_support.tree_digest(previous_site)
    beside = sorted(os.listdir(previous_site.parent))
    done = site_support.build(trace, previous_site)
    line = assert_failed_cleanly(done)
    assert trace.name in line.split(": ")[0], f"error should name the trace file: {line}"
    assert site_support.tree_digest(previous_site) == before, "the previous site was modified"
    assert sorted(os.listdir(previous_site.parent)) == beside, "the build left files behind"


class _Markup(HTMLParser):
    """Collects tag names and text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.svg_depth = 0
        self.svg_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.svg_depth += tag == "svg"

    def handle_endtag(self, tag: str) -> None:
        self.svg_depth -= tag == "svg" and self.svg_depth > 0

    def handle_data(self, data: str) -> None:
        (self.svg_text if self.svg_depth else self.text).append(data)


def test_hostile_parameter_names_are_escaped(tmp_path: Path) -> None:
    text = _golden().replace("residual.branch.weight", HOSTILE)
    assert text.count(HOSTILE) == 2  # CONFIG.branch-parameter and PARAMETER.name
    trace = tmp_path / "hostile.trace"
    trace.write_text(text, encoding="utf-8")
    site = site_support.build_or_fail(trace, tmp_path / "site")
    seen_in_text = seen_in_svg = False
    for page, html in _pages(site):
        markup = _Markup()
        markup.feed(html)
        assert "evil" not in markup.tags, f"{page}: the name was injected as a tag"
        seen_in_text |= HOSTILE in "".join(markup.text)
        seen_in_svg |= HOSTILE in "".join(markup.svg_text)
    assert seen_in_text, "the hostile name should be shown, escaped, in the page text"
    assert seen_in_svg, "the hostile name should be shown, escaped, in a diagram label"


def _pages(site: Path) -> list[tuple[str, str]]:
    return [(p.relative_to(site).as_posix(), p.read_text(encoding="utf-8"))
            for p in sorted(site.rglob("*.html"))]


PLANTED = """
import runpy, sys
import sitebuild.gates.audit as audit
from sitebuild.gates import Finding
audit.audit_site = lambda *args: [Finding("index.html", 1, "audit", "planted finding")]
sys.argv = ["build_site.py", "build", "--trace", sys.argv[1], "--out", sys.argv[2]]
runpy.run_path("build_site.py", run_name="__main__")
"""


def test_failing_gate_fails_the_build_atomically(previous_site: Path, tmp_path: Path) -> None:
    trace = tmp_path / "good.trace"
    trace.write_text(_golden(), encoding="utf-8")
    before = site_support.tree_digest(previous_site)
    beside = sorted(os.listdir(previous_site.parent))
    done = subprocess.run(
        [sys.executable, "-c", PLANTED, str(trace), str(previous_site)],
        cwd=site_support.ROOT, capture_output=True, text=True, timeout=site_support.BUILD_TIMEOUT,
    )
    line = assert_failed_cleanly(done)
    assert "[audit] planted finding" in line, line
    assert site_support.tree_digest(previous_site) == before, "the previous site was modified"
    assert sorted(os.listdir(previous_site.parent)) == beside, "the build left files behind"


def test_missing_graphviz_fails_cleanly(previous_site: Path, tmp_path: Path) -> None:
    trace = tmp_path / "good.trace"
    trace.write_text(_golden(), encoding="utf-8")
    before = site_support.tree_digest(previous_site)
    done = subprocess.run(
        [sys.executable, "build_site.py", "build", "--trace", str(trace), "--out",
         str(previous_site)],
        cwd=site_support.ROOT, capture_output=True, text=True, timeout=site_support.BUILD_TIMEOUT,
        env={**os.environ, "PATH": str(tmp_path / "no-tools")},
    )
    line = assert_failed_cleanly(done, PHASE_LINE)
    assert "dot" in line, line
    assert site_support.tree_digest(previous_site) == before, "the previous site was modified"
