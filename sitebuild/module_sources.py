"""The source closure of a module: the project files a Python process runs when it imports it.

Contract: ``source_closure(root, modules)`` follows every ``import x.y`` and ``from x.y import
z`` (at any depth of the module, lazy imports included) that names a module or package of the
project under ``root``, plus each module's parent packages' ``__init__.py``, and returns the
files sorted. It reads import statements as text and runs nothing, so a cache key built from
it changes exactly when code the run depends on changes, and editing one experiment leaves the
others' keys alone. (A scan of import lines, not ``ast``: it runs on every build, and reading a
statement too many only widens a key. tests/test_imports.py checks the same rules with ``ast``.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# ``import a.b, c as d`` and ``from .a import (b, c)`` at any indentation; the parenthesised
# list may run over several lines.
IMPORT_RE = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+)", re.MULTILINE)
FROM_RE = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)",
                     re.MULTILINE)
_SCANNED: dict[tuple[Path, int, int], tuple[str, ...]] = {}


def module_file(root: Path, module: str) -> Path | None:
    """The file of a project module or package, or None for anything outside the project."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, module: str) -> tuple[str, ...]:
    info = path.stat()
    memo = (path, info.st_mtime_ns, info.st_size)
    if memo not in _SCANNED:
        _SCANNED[memo] = tuple(_scan(path.read_text(encoding="utf-8"), path, module))
    return _SCANNED[memo]


def _scan(text: str, path: Path, module: str) -> Iterable[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for found in IMPORT_RE.finditer(text):
        yield from (part.split()[0] for part in found.group(1).split(",") if part.strip())
    for found in FROM_RE.finditer(text):
        base, names = found.group(1), found.group(2).strip("()")
        level = len(base) - len(base.lstrip("."))
        base = base.lstrip(".")
        if level:
            parts = package.split(".")[: len(package.split(".")) - level + 1]
            base = ".".join([*parts, base] if base else parts)
        yield base
        # ``from pkg import sub`` may name a submodule rather than an attribute.
        for name in names.replace("\n", " ").split(","):
            if name.split():
                yield f"{base}.{name.split()[0]}"


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
