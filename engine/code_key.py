"""What a computation's result depends on, as one hash: the code it runs and the numerics.

Contract: ``closure(modules)`` is every file of the project's packages (``engine``,
``tracefile``) that ``modules`` import, directly or through each other, found by reading
their import statements (nothing is imported); a module's enclosing packages' ``__init__``
files are counted too, but their own imports only when a module names that package.
``code_key(modules)`` hashes those files' syntax trees (docstrings dropped, so editing a
comment or a docstring changes no key) with ``engine.numerics``'s (which defines the
reference kernels), the Python minor version and numpy's and OpenBLAS's versions: two runs
with one key on the reference kernels give the same bytes. The kernels a machine actually
runs are not in the key: a machine off the reference reads the reference's records, and only
its own computations (the local cell cache) are keyed by its kernels too.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import sys
from collections.abc import Iterable
from pathlib import Path

#: The project's root and the packages whose code a key follows.
ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "tracefile")


def module_file(name: str) -> Path | None:
    """The file of project module ``name`` (a package's ``__init__.py``), or None."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_imports(path: Path) -> set[str]:
    """The project modules ``path``'s import statements name (``from X import y``: X, and
    X.y when that is a module)."""
    names = _names_imported(path, path.read_text(encoding="utf-8"))
    return {name for name in names if module_file(name) is not None}


# Parsing is what keys cost; a text parsed once in a process is not parsed again (the text,
# not the path, is the cache's key, so an edited file is read afresh).
@functools.lru_cache(maxsize=4096)
def _names_imported(path: Path, text: str) -> frozenset[str]:
    """Every name the import statements of ``text`` (the module at ``path``) name."""
    names: set[str] = set()
    package = _module_name(path) if path.name == "__init__.py" else \
        _module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(names)


def closure(modules: Iterable[str]) -> list[Path]:
    """Every project file ``modules`` run (see the module doc), sorted."""
    todo = [name for name in modules if module_file(name) is not None]
    seen: set[str] = set()
    files: set[Path] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        assert path is not None
        files.add(path)
        todo.extend(project_imports(path) - seen)
        parts = name.split(".")
        files.update(f for f in (module_file(".".join(parts[:i])) for i in range(1, len(parts)))
                     if f is not None)
    return sorted(files)


def _syntax(path: Path) -> str:
    """A module's syntax tree, docstrings dropped, as text (comments never reach the tree)."""
    return _syntax_of(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=4096)
def _syntax_of(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def libraries_part() -> str:
    """The Python minor version and the numpy and OpenBLAS the lock installs."""
    from engine.numerics import current

    found = current()
    return (f"python {sys.version_info[0]}.{sys.version_info[1]}\nnumpy {found.numpy}\n"
            f"blas {found.blas}\n")


def code_key(modules: Iterable[str], *extra: str) -> str:
    """The hash of ``modules``' closure, the numerics and ``extra`` (see the module doc)."""
    digest = hashlib.sha256(libraries_part().encode())
    for path in closure([*modules, "engine.numerics"]):
        digest.update(f"{path.relative_to(ROOT).as_posix()}\n{_syntax(path)}\n".encode())
    for part in extra:
        digest.update(f"{part}\n".encode())
    return digest.hexdigest()
