"""Rebuilt comparison (gate name "rebuilt"): a checked site is the site the build makes.

Contract: ``compare_sites(checked, rebuilt)`` holds every file of a built site (every page,
chart, script, search index, notebook, trace listing and the PDF edition: whatever a reader
can see or download) against the site the build makes from the checked traces, byte for byte,
since two builds of one commit are byte-identical. A file missing, extra or different is one
finding at the file, placed at its first differing line for text and at its first differing
byte otherwise.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitebuild.gates.pages import Finding

GATE = "rebuilt"
WINDOW = 60  # characters of a long line shown either side of its first difference
WHY = "the build makes from the checked traces"


def site_files(root: Path) -> dict[str, str]:
    """Every file under ``root`` by its path relative to it (``/``-separated), with the
    sha256 of its bytes."""
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}


def compare_sites(checked: Path, rebuilt: Path) -> list[Finding]:
    """One finding per file of ``checked`` that is not in ``rebuilt`` as it is there, and per
    file of ``rebuilt`` that ``checked`` lacks."""
    mine, theirs = site_files(checked), site_files(rebuilt)
    found = [Finding(name, None, GATE, f"is not in the site {WHY}")
             for name in sorted(mine.keys() - theirs.keys())]
    found += [Finding(name, None, GATE, f"is missing: the site {WHY} has it")
              for name in sorted(theirs.keys() - mine.keys())]
    for name in sorted(mine.keys() & theirs.keys()):
        if mine[name] != theirs[name]:
            found.append(difference(name, (checked / name).read_bytes(),
                                    (rebuilt / name).read_bytes()))
    return found


def difference(name: str, got: bytes, want: bytes) -> Finding:
    """A finding at the first place where ``got`` leaves ``want``."""
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
              min(len(got), len(want)))
    try:
        text, expected = got.decode("utf-8"), want.decode("utf-8")
    except UnicodeDecodeError:
        return Finding(name, None, GATE, f"differs from the file in the site {WHY} from its "
                       f"byte {at} ({len(got)} against {len(want)} bytes)")
    before = got[:at].decode("utf-8", "ignore")  # a split character counts as unchanged
    line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1)
    return Finding(name, line, GATE, f"differs from the file in the site {WHY}: shows "
                   f"{_excerpt(text, line, column)!r} where it has "
                   f"{_excerpt(expected, line, column)!r}")


def _excerpt(text: str, line: int, column: int) -> str:
    """Line ``line`` of ``text`` around ``column``, cut to ``WINDOW`` characters a side."""
    lines = text.split("\n")
    row = lines[line - 1] if line <= len(lines) else "(end of file)"
    start = max(0, column - WINDOW)
    cut = row[start:column + WINDOW]
    return ("…" if start else "") + cut + ("…" if column + WINDOW < len(row) else "")
