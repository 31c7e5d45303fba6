"""The house's import rules, read from every module's ``ast`` (nothing is imported to check).

- ``tracefile/`` imports nothing of ours; ``diagrams/`` imports only ``tracefile/``; the build
  package (``sitebuild/``) and ``build_site.py`` never import ``engine``; ``engine`` may use
  ``tracefile`` but nothing on the site side.
- No import circle among the modules of ``tracefile/``, ``diagrams/`` and ``sitebuild/``.
- The third-party packages the code imports are exactly the declared dependencies (runtime
  code against ``dependencies``, tests and benchmarks against those plus ``dev``), save the
  few declared packages that are used through configuration rather than imports.
Each rule is also run on a small made-up tree to prove it can fail.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
OURS = ("engine", "tracefile", "diagrams", "sitebuild", "build_site")
SITE_SIDE = ("tracefile", "diagrams", "sitebuild")
#: Which of our packages each package may import (besides itself).
ALLOWED = {
    "tracefile": set(),
    "diagrams": {"tracefile"},
    "sitebuild": {"tracefile", "diagrams"},
    "build_site": {"tracefile", "diagrams", "sitebuild"},
    "engine": {"tracefile"},
}
#: Declared, but used by name in mkdocs.yml rather than imported.
CONFIGURED = {"mkdocs": "the site generator, run as a command",
              "mkdocs-material": "the theme", "pymdown-extensions": "Markdown extensions",
              "zensical": "the second site generator, run as a command",
              "ipykernel": "the kernel `record` runs the labs' notebooks in"}
#: Import names that differ from their distribution's name.
DISTRIBUTION_OF = {"yaml": "pyyaml", "jinja2": "jinja2", "markupsafe": "markupsafe",
                   "mkdocs": "mkdocs", "material": "mkdocs-material",
                   "pymdownx": "pymdown-extensions"}
#: Distributions that arrive with a declared one and that tests may use.
TEST_EXTRAS = {"packaging": "installed with pytest, matplotlib and mkdocs",
               "markdown": "installed with mkdocs (the audit tests render Markdown as it does)"}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path) -> set[str]:
    """Every module a file imports, absolute, at any depth (lazy imports included)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def sources(root: Path, tops: Iterable[str]) -> list[Path]:
    files: list[Path] = []
    for top in tops:
        if (root / f"{top}.py").is_file():
            files.append(root / f"{top}.py")
        files += sorted((root / top).rglob("*.py")) if (root / top).is_dir() else []
    return files


def graph(root: Path, tops: Iterable[str]) -> dict[str, set[str]]:
    """Module → the modules of ``tops`` it imports (names that are modules of the tree)."""
    files = sources(root, tops)
    modules = {module_name(path, root) for path in files}
    return {module_name(path, root): {m for m in imports_of(path, root) if m in modules}
            for path in files}


def direction_problems(root: Path) -> list[str]:
    problems = []
    for module, imported in sorted(graph(root, OURS).items()):
        top = module.split(".")[0]
        for other in sorted(imported):
            other_top = other.split(".")[0]
            if other_top != top and other_top not in ALLOWED[top]:
                problems.append(f"{module} imports {other}")
    return problems


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def third_party(root: Path, tops: Iterable[str]) -> set[str]:
    """Distribution names of every non-standard, non-project import under ``tops``."""
    names = set()
    for path in sources(root, tops):
        for module in imports_of(path, root):
            top = module.split(".")[0]
            if top and top not in sys.stdlib_module_names and top not in OURS and top not in (
                    "tests",) and not script_sibling(path, top):
                names.add(DISTRIBUTION_OF.get(top, top.replace("_", "-")).lower())
    return names


def script_sibling(path: Path, top: str) -> bool:
    """Whether ``top`` is a module beside ``path`` in a folder of scripts (a test's support
    module, a benchmark's sibling): run with that folder on the path, it is the project's own.
    Inside a package (a folder with ``__init__.py``) a bare ``import`` never finds a sibling."""
    return (not (path.parent / "__init__.py").is_file()
            and (path.parent / f"{top}.py").is_file())


def declared(extra: str | None = None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {Requirement(spec).name.lower() for spec in specs}


# ---- the rules, on the project ----


def test_imports_run_only_the_allowed_way() -> None:
    assert direction_problems(ROOT) == []


def test_no_import_circle_on_the_site_side() -> None:
    assert circles(graph(ROOT, SITE_SIDE)) == []


def test_runtime_imports_equal_the_declared_dependencies() -> None:
    imported = third_party(ROOT, OURS)
    runtime = declared()
    assert imported - runtime == set(), "imported but not declared"
    assert runtime - imported - set(CONFIGURED) == set(), "declared but never imported"


def test_tests_and_benchmarks_import_only_declared_packages() -> None:
    imported = third_party(ROOT, ("tests", "benchmarks"))
    allowed = declared() | declared("dev") | set(TEST_EXTRAS)
    assert imported - allowed == set()
    # Used as commands or a pytest plugin, not imported: the linter, the workflow schema check
    # the parallel runner of the fast loop (./dev test --fast) and the layering's checker.
    commands = {"ruff", "check-jsonschema", "pytest-xdist", "import-linter"}
    assert declared("dev") - imported - commands == set(), (
        "dev dependency never imported")


# ---- each rule can fail ----


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(("files", "problem"), [
    ({"tracefile/a.py": "import diagrams.b\n", "diagrams/b.py": ""}, "tracefile.a imports"),
    ({"diagrams/a.py": "from sitebuild import b\n", "sitebuild/b.py": ""}, "diagrams.a"),
    ({"sitebuild/a.py": "def f():\n    import engine.x\n", "engine/x.py": ""}, "sitebuild.a"),
    ({"engine/a.py": "from diagrams.b import c\n", "diagrams/b.py": ""}, "engine.a imports"),
])
def test_a_wrong_way_import_is_found(tmp_path: Path, files: dict[str, str],
                                     problem: str) -> None:
    problems = direction_problems(write_tree(tmp_path, files))
    assert len(problems) == 1 and problems[0].startswith(problem)


def test_a_circle_is_found(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"sitebuild/__init__.py": "", "sitebuild/a.py": "from . import b\n",
                                 "sitebuild/b.py": "from sitebuild.c import x\n",
                                 "sitebuild/c.py": "from sitebuild import a\n"})
    assert circles(graph(root, SITE_SIDE)) == [["sitebuild.a", "sitebuild.b", "sitebuild.c"]]


def test_a_scripts_sibling_is_ours_and_a_packages_is_not(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"benchmarks/a.py": "import b\nimport c\n", "benchmarks/b.py": "",
                                 "sitebuild/__init__.py": "", "sitebuild/a.py": "import b\n",
                                 "sitebuild/b.py": ""})
    assert third_party(root, ("benchmarks",)) == {"c"}
    assert third_party(root, ("sitebuild",)) == {"b"}


def test_an_undeclared_import_is_found(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/a.py": "import yaml\nimport json\nimport requests\n"})
    assert third_party(root, ("engine",)) == {"pyyaml", "requests"}


# ---- the same layering, declared for import-linter (pyproject.toml, tool.importlinter) ----


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")  # the checker's own command
    return subprocess.run([str(lint), "--no-cache"], cwd=root,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(root)})


def test_the_declared_layering_holds() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_declared_layering_can_fail(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {name: "" for name in (
        "engine/__init__.py", "tracefile/__init__.py", "diagrams/__init__.py",
        "sitebuild/__init__.py")})
    (root / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    (root / "tracefile" / "bad.py").write_text("import sitebuild\n", encoding="utf-8")
    (root / "sitebuild" / "bad.py").write_text("import engine\n", encoding="utf-8")
    done = lint_imports(root)
    assert done.returncode == 1 and "2 broken" in done.stdout, done.stdout
