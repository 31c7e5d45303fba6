"""Rewrite the drawing goldens from the recorded traces: ``python -m tests.refresh_goldens``
(``./dev goldens``); review the diff before committing it.

Contract: the traces themselves are the records in ``records/`` (``./dev record`` keeps
them). Off the reference numerics (`engine.numerics.current().reference`) it refuses in one
line, exit status 2, unless given ``--force``. It runs the tests that call
``assert_drawing_matches_golden`` with ``UPDATE_GOLDEN=1`` and prints per file
``unchanged``, or ``changed`` with line counts and the first lines of a unified diff, then
``git status --porcelain tests/golden``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.errors import NumericsError
from engine.numerics import current, pin

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = ROOT / "tests" / "golden"
#: How much of a changed file's diff is printed.
EXCERPT_LINES = 6
EXCERPT_WIDTH = 120


@dataclass(frozen=True)
class Change:
    """One golden file against its fresh bytes (``name`` relative to the golden folder)."""

    name: str
    changed: bool
    new: bool = False
    added: int = 0
    removed: int = 0
    excerpt: tuple[str, ...] = ()

    def summary(self) -> str:
        if not self.changed:
            return f"{self.name}: unchanged"
        kind = "new" if self.new else "changed"
        lines = [f"{self.name}: {kind}, +{self.added} -{self.removed} lines"]
        return "\n".join([*lines, *(f"    {line}" for line in self.excerpt)])


def change(name: str, old: bytes | None, new: bytes) -> Change:
    """How ``new`` differs from ``old`` (None: there was no file)."""
    if old == new:
        return Change(name, changed=False)
    before = [] if old is None else old.decode("utf-8", "replace").splitlines(keepends=True)
    after = new.decode("utf-8", "replace").splitlines(keepends=True)
    # Past the two file headers: hunk headers (@@), removed (-) and added (+) lines.
    diff = [line.rstrip("\n") for line in difflib.unified_diff(before, after, n=0)][2:]
    body = [line for line in diff if not line.startswith("@@")]
    return Change(name, True, old is None,
                  added=sum(line.startswith("+") for line in body),
                  removed=sum(line.startswith("-") for line in body),
                  excerpt=tuple(line[:EXCERPT_WIDTH] for line in diff[:EXCERPT_LINES]))


def compare(fresh: dict[str, bytes], golden_dir: Path) -> list[Change]:
    """Each fresh file (name → bytes, names relative to ``golden_dir``) against its golden."""
    return [change(name, _read(golden_dir / name), data) for name, data in fresh.items()]


def write_changed(fresh: dict[str, bytes], changes: list[Change], golden_dir: Path) -> None:
    for item in changes:
        if item.changed:
            (golden_dir / item.name).write_bytes(fresh[item.name])


def drawing_tests() -> list[Path]:
    """The test files that hold drawings against re-acceptable goldens."""
    return sorted(path for path in (ROOT / "tests").glob("test_*.py")
                  if "assert_drawing_matches_golden(" in path.read_text(encoding="utf-8"))


def refresh_drawings(skip: set[str]) -> list[Change]:
    """Re-accept the drawing goldens with ``UPDATE_GOLDEN=1``; what that changed (but ``skip``)."""
    before = snapshot(GOLDEN_DIR)
    tests = [str(path.relative_to(ROOT)) for path in drawing_tests()]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *tests], cwd=ROOT, env={**os.environ, "UPDATE_GOLDEN": "1"},
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"refresh_goldens: error: {' '.join(tests)} failed with "
                         "UPDATE_GOLDEN=1 (see above)")
    return [change(name, before.get(name), data)
            for name, data in snapshot(GOLDEN_DIR).items() if name not in skip]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path."""
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.refresh_goldens",
        description="Rewrite the drawing goldens in tests/golden from the recorded traces "
        "(UPDATE_GOLDEN=1) and print what changed; ./dev record keeps the traces. Review "
        "the diff before committing it.")
    parser.add_argument("--force", action="store_true",
                        help="write the goldens even on a machine off the reference numerics")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        pin()  # the engine runs below pin themselves the same way: `current` speaks for them
    except NumericsError as error:
        print(f"refresh_goldens: error: {error}", file=sys.stderr)
        return 2
    numerics = current()
    if not numerics.reference and not args.force:
        print(f"refresh_goldens: error: this machine is off the reference numerics "
              f"({numerics.machine}, BLAS kernel {numerics.kernel}) and goldens are written "
              "on the reference kind (engine/numerics.py); --force writes them anyway",
              file=sys.stderr)
        return 2
    changes = refresh_drawings(skip=set())
    print("\n".join(item.summary() for item in changes))
    status = subprocess.run(["git", "status", "--porcelain", "--", "tests/golden"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout
    print("git status --porcelain tests/golden:", status.rstrip() if status.strip()
          else "nothing changed against the last commit", sep="\n")
    return 0


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


if __name__ == "__main__":
    sys.exit(main())
