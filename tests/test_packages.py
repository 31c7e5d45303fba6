"""Each package's docstring is its map: it names every module and subpackage it holds; and
no two classes of the project share a name.

A newcomer opens a package's ``__init__.py`` to find a room; a module the map leaves out is
one nobody finds. Two classes of one name are one name for two things: which one a reader,
a traceback or a search means is then a guess. Read from the files (nothing is imported),
and run on made-up packages to prove each check can fail.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from paths import ROOT

#: The packages whose docstrings list their modules (the others name their few in prose).
MAPPED = ("tracefile", "diagrams", "sitebuild", "sitebuild/gates", "engine/ops")
#: The project's code: its packages, the build command and the benchmarks.
CODE = ("engine", "tracefile", "diagrams", "sitebuild", "benchmarks", "build_site.py")


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


def shared_class_names(*roots: Path) -> dict[str, list[str]]:
    """Each class name defined more than once under ``roots``, with where (path:line)."""
    found: dict[str, list[str]] = {}
    for root in roots:
        for path in sorted([root] if root.is_file() else root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, []).append(f"{path.name}:{node.lineno}")
    return {name: places for name, places in found.items() if len(places) > 1}


def test_no_two_classes_of_the_project_share_a_name() -> None:
    assert shared_class_names(*(ROOT / name for name in CODE)) == {}


def test_two_classes_of_one_name_are_found(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text("class Config:\n    pass\n")
    (tmp_path / "two.py").write_text("class Other:\n    class Config:\n        pass\n")
    assert shared_class_names(tmp_path) == {"Config": ["one.py:1", "two.py:2"]}
