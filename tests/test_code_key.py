"""engine/code_key.py: a key follows exactly the code a computation runs (its own import
closure), ignores comments and docstrings, and names the libraries."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import code_key


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small project: ``engine.lab.cell`` imports ``engine.ops``; ``engine.lab.other`` is
    beside it; ``engine/numerics.py`` is always in a key."""
    files = {
        "engine/__init__.py": "",
        "engine/numerics.py": "KERNEL = 'Haswell'\n",
        "engine/ops.py": "def add(a, b):\n    return a + b\n",
        "engine/lab/__init__.py": "from engine.lab.other import OTHER\n",
        "engine/lab/cell.py": '"""A cell."""\nfrom engine.ops import add\nSTEPS = 1\n',
        "engine/lab/other.py": "OTHER = 2\n",
        "tracefile/__init__.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(code_key, "ROOT", tmp_path)
    monkeypatch.setattr(code_key, "libraries_part", lambda: "numpy 2\n")
    return tmp_path


def names(paths: list[Path], root: Path) -> list[str]:
    return [path.relative_to(root).as_posix() for path in paths]


def test_the_closure_follows_imports_and_counts_enclosing_packages(project) -> None:
    assert names(code_key.closure(["engine.lab.cell"]), project) == [
        "engine/__init__.py", "engine/lab/__init__.py", "engine/lab/cell.py", "engine/ops.py"]


def test_an_edit_outside_the_closure_changes_nothing(project) -> None:
    before = code_key.code_key(["engine.lab.cell"])
    (project / "engine/lab/other.py").write_text("OTHER = 3\n")
    assert code_key.code_key(["engine.lab.cell"]) == before


@pytest.mark.parametrize("edit", ["engine/ops.py", "engine/lab/cell.py", "engine/numerics.py"])
def test_an_edit_of_the_code_it_runs_changes_the_key(project, edit) -> None:
    before = code_key.code_key(["engine.lab.cell"])
    path = project / edit
    path.write_text(path.read_text() + "EXTRA = 1\n")
    assert code_key.code_key(["engine.lab.cell"]) != before


def test_comments_and_docstrings_change_nothing(project) -> None:
    before = code_key.code_key(["engine.lab.cell"])
    (project / "engine/lab/cell.py").write_text(
        '"""A cell, said again."""\nfrom engine.ops import add  # the op\nSTEPS = 1\n')
    assert code_key.code_key(["engine.lab.cell"]) == before


def test_the_libraries_and_extra_parts_are_in_the_key(project, monkeypatch) -> None:
    before = code_key.code_key(["engine.lab.cell"])
    assert code_key.code_key(["engine.lab.cell"], "trace-a") != before
    monkeypatch.setattr(code_key, "libraries_part", lambda: "numpy 3\n")
    assert code_key.code_key(["engine.lab.cell"]) != before


def test_relative_imports_are_followed(project) -> None:
    (project / "engine/lab/cell.py").write_text("from ..ops import add\nfrom . import other\n")
    assert "engine/lab/other.py" in names(code_key.closure(["engine.lab.cell"]), project)
    assert "engine/ops.py" in names(code_key.closure(["engine.lab.cell"]), project)


def test_the_real_cells_own_closure_leaves_the_rest_of_their_lab_out() -> None:
    found = {p.name for p in code_key.closure(["engine.experiments.gradient_flow.cells"])}
    assert {"cells.py", "common.py", "tensor.py", "optim.py"} <= found
    assert not {"sweep.py", "training.py", "results.py", "grid.py"} & found
