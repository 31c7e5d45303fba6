"""Nothing of a dependency is replaced or read from inside at run time: the build code never
assigns to (or deletes) an attribute of a module or class it imported from outside the project,
and never touches a private (``_name``) attribute that the project does not define itself, on
anything (a module, a class, an object a dependency made). Public attributes of objects it
made are its own (a logger's ``propagate``, a server's ``error_handler``). The one documented
hook it sets is allowed by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from paths import ROOT

OURS = ("engine", "tracefile", "diagrams", "sitebuild")
CHECKED = ("sitebuild", "diagrams", "tracefile", "engine", "build_site.py")
#: The interpreter's documented hook for exceptions it cannot raise (sitebuild.interrupts), and
#: the command line a module run by ``runpy`` reads, as ``python -m`` sets it (sitebuild.processes).
DOCUMENTED_HOOKS = {"sys.unraisablehook", "sys.argv"}
#: Public despite the underscore: the documented exit without clean-up, for a forked child.
DOCUMENTED_PRIVATE = {"os._exit"}


def imported_names(tree: ast.Module) -> set[str]:
    """The names a module binds to a module or class imported from outside the project."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names
                      if a.name.split(".")[0] not in OURS}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] not in OURS:
            names |= {a.asname or a.name for a in node.names}
    return names


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def own_private_names(trees: list[ast.Module]) -> set[str]:
    """Every ``_name`` the project defines: functions, classes, assigned names and attributes,
    ``__slots__`` entries."""
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)  # __slots__ entries, object.__setattr__(self, "_x", ...)
    return {name for name in names if name.startswith("_")}


def problems(path: Path, text: str, own: set[str]) -> list[str]:
    tree = ast.parse(text)
    foreign = imported_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [
                node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        for target in targets:
            name = dotted(target) if isinstance(target, ast.Attribute) else None
            if name and name.split(".")[0] in foreign and name not in DOCUMENTED_HOOKS:
                found.append(f"{path}:{node.lineno}: changes {name}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            name = dotted(node) or f"….{node.attr}"
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            foreign_root = name.split(".")[0] in foreign
            if name in DOCUMENTED_PRIVATE or on_self or (
                    node.attr in own and not foreign_root):
                continue
            found.append(f"{path}:{node.lineno}: touches private {name}")
    return found


def project_problems(root: Path) -> list[str]:
    files = [p for name in CHECKED for p in
             (sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name])
             if p.is_file()]
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    own = own_private_names([ast.parse(text) for text in texts.values()])
    return [problem for path, text in texts.items()
            for problem in problems(path.relative_to(root), text, own)]


def test_the_build_replaces_nothing_of_its_dependencies() -> None:
    assert project_problems(ROOT) == []


@pytest.mark.parametrize(("code", "problem"), [
    ("from mkdocs.structure.pages import Page\nPage.render = None\n", "changes Page.render"),
    ("import material.plugins.search.plugin as s\ns.Parser.feed = f\n", "changes s.Parser.feed"),
    ("import html.parser\nsetattr(html.parser.HTMLParser, 'feed', f)\n", "changes html.parser"),
    ("from html.parser import HTMLParser\ndel HTMLParser.feed\n", "changes HTMLParser.feed"),
    ("import jinja2\nx = jinja2._internal\n", "touches private jinja2._internal"),
    ("def f(page):\n    return page._title_from_render\n",
     "touches private page._title_from_render"),
    ("def f(parser):\n    parser.rawdata = ''\n    return parser._mine\n",
     "touches private parser._mine"),
    ("import sys\nsys.excepthook = f\n", "changes sys.excepthook"),
])
def test_a_replacement_is_found(tmp_path: Path, code: str, problem: str) -> None:
    (tmp_path / "sitebuild").mkdir()
    (tmp_path / "sitebuild" / "a.py").write_text(code, encoding="utf-8")
    found = project_problems(tmp_path)
    assert len(found) == 1 and problem in found[0], found


def test_what_the_code_made_is_its_own(tmp_path: Path) -> None:
    code = ("import logging\nimport sys\nlogger = logging.getLogger('x')\n"
            "logger.propagate = False\nsys.unraisablehook = hook\n"
            "class A:\n    __slots__ = ('_kind',)\n    def f(self, other):\n"
            "        self._mine = 1\n        return other._kind, other._mine\n")
    (tmp_path / "sitebuild").mkdir()
    (tmp_path / "sitebuild" / "a.py").write_text(code, encoding="utf-8")
    assert project_problems(tmp_path) == []
