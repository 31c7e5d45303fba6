"""The source closure of a module: the project files a Python process runs when it imports it.

Contract: ``source_closure(root, modules)`` follows every ``import x.y`` and ``from x.y import
z`` (at any depth of the module, lazy imports included) that names a module or package of the
project under ``root``, plus each module's parent packages' ``__init__.py``, and returns the
files sorted. It reads the sources with ``ast`` and runs nothing, so a cache key built from it
changes exactly when code the run depends on changes, and editing one experiment leaves the
others' keys alone.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


def module_file(root: Path, module: str) -> Path | None:
    """The file of a project module or package, or None for anything outside the project."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, module: str) -> Iterable[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield base
            # ``from pkg import sub`` may name a submodule rather than an attribute.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def source_closure(root: Path, modules: Iterable[str]) -> list[Path]:
    """Every project file the given modules run, sorted."""
    todo, seen, files = list(modules), set(), set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        path = module_file(root, module)
        if path is None:
            continue
        files.add(path)
        todo.extend(_imports(path, module))
    return sorted(files)
