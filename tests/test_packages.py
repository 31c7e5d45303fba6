"""Each package's docstring is its map: it names every module and subpackage it holds.

A newcomer opens a package's ``__init__.py`` to find a room; a module the map leaves out is
one nobody finds. Read from the files (nothing is imported), and run on a made-up package to
prove the check can fail.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from paths import ROOT

#: The packages whose docstrings list their modules (the others name their few in prose).
MAPPED = ("tracefile", "diagrams", "sitebuild", "sitebuild/gates", "engine/ops")


def unnamed(package: Path) -> list[str]:
    """The modules and subpackages of ``package`` its docstring does not name (a name counts
    in backticks: ``name``, ``name/`` or ``package.name``)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
    named = set(re.findall(r"`+(?:[\w.]+\.)?(\w+)/?`+", doc or ""))
    rooms = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    rooms += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(room for room in rooms if room not in named)


@pytest.mark.parametrize("package", MAPPED)
def test_the_package_docstring_names_every_module(package: str) -> None:
    assert unnamed(ROOT / package) == []


def test_a_module_the_docstring_leaves_out_is_found(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text('"""Modules: ``known``; ``sub/``."""\n')
    for name in ("known.py", "forgotten.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    assert unnamed(tmp_path) == ["forgotten"]
