"""The labs' notebooks (notebooks/, engine/notebook_records.py, sitebuild/notebooks.py,
engine/lab_notebook.py): each one published executed, every experiment it runs held line by
line against the published trace (the records, which the site publishes byte for byte:
test_gates_published.py) and that check shown failing on a changed value; its exercises done
wrong and right in a Python kernel (nbclient), as a reader would run the file the lab page
offers; a notebook executed twice giving the same bytes; the build's rules for a notebook's
source and its executed record, each shown failing at its line.

That the executed records are what today's code prints is the records' own check: `./dev test`
runs `record --check` (keys), and CI's `record --verify-changed` executes every changed one
again and compares it byte for byte (test_records.py covers both).

The comparison is exact: the notebook pins the numerics as the engine's runs do
(engine/numerics.py), so its values have the trace's bits.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from paths import RECORDS_DIR, ROOT

from engine import lab_notebook, notebook_records
from engine.errors import EngineError
from engine.experiments.gradient_flow import LAB_SEED
from engine.experiments.gradient_flow.scalar import TenLayersConfig, ten_layers
from sitebuild.errors import BuildError
from sitebuild.notebooks import NOTEBOOKS, notebook_files
from tracefile.schemas import SCHEMAS

#: Each notebook and the trace it checks its runs against.
LABS = {"gradient-flow": "gradient-flow-v4", "residual-stream": "residual-stream-v4"}
_CHECKED = re.compile(r'same_as_trace\(LAB, "([a-z-]+)"')
#: The kernel the tests run (the notebooks name the project's own, which CI does not install).
KERNEL = "python3"

# One worker runs the module, so the notebooks execute once a session, not once a worker.
pytestmark = [pytest.mark.xdist_group("notebooks"), pytest.mark.longest]


def _printed(notebook: nbformat.NotebookNode) -> str:
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", ()) if output.output_type == "stream")


def _run(notebook: nbformat.NotebookNode) -> str:
    NotebookClient(notebook, timeout=900, kernel_name=KERNEL,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return _printed(notebook)


def _published(lab: str) -> nbformat.NotebookNode:
    return nbformat.reads(notebook_files(ROOT)[f"{NOTEBOOKS}/{lab}.ipynb"].decode(), as_version=4)


@pytest.fixture(scope="module")
def executed() -> dict[str, str]:
    """What each notebook, as the site publishes it, printed when it was executed, by name."""
    return {lab: _printed(_published(lab)) for lab in LABS}


@pytest.mark.parametrize("lab", sorted(LABS))
def test_a_notebook_runs_each_experiment_as_the_trace_holds_it(executed: dict[str, str],
                                                              lab: str) -> None:
    source = (ROOT / NOTEBOOKS / f"{lab}.py").read_text(encoding="utf-8")
    names = _CHECKED.findall(source)
    assert names, f"{lab}: the notebook checks no experiment against its trace"
    for name in names:
        assert re.search(rf"^{name}: (?:its one record line equals|all (?:[2-9]|[1-9]\d+) "
                         rf"record lines of this run equal) trace {LABS[lab]}'s, bit for bit$",
                         executed[lab], re.M), name
    # Short lines a reader can read, not raw records; exercises waiting for a prediction.
    assert max(map(len, executed[lab].splitlines())) <= 120
    assert executed[lab].count("Write your prediction first") >= 3


def test_the_trace_check_fails_on_a_changed_value(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run = ten_layers(LAB_SEED, TenLayersConfig())
    published = (RECORDS_DIR / SCHEMAS["gradient-flow-v4"].file_name).read_text(encoding="utf-8")
    line = next(row for row in published.splitlines() if row.startswith("TEN-LAYERS "))
    value = re.search(r"plain=(\S+)", line).group(1)
    tampered = line.replace(f"plain={value} ", f"plain={value}1 ")
    (tmp_path / SCHEMAS["gradient-flow-v4"].file_name).write_text(
        published.replace(line, tampered), encoding="utf-8")
    monkeypatch.setattr(lab_notebook, "RECORDS", tmp_path)
    with pytest.raises(AssertionError) as caught:
        lab_notebook.same_as_trace("gradient-flow-v4", "ten-layers", run)
    assert str(caught.value) == f"this run wrote {line!r}, but gradient-flow-v4 holds {tampered!r}"


def test_the_trace_check_wants_a_record_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab_notebook, "experiment_lines", lambda *args: "")
    with pytest.raises(AssertionError, match="wrote no record line of ten-layers"):
        lab_notebook.same_as_trace("gradient-flow-v4", "ten-layers", None)


@pytest.mark.parametrize(("prediction", "measured", "says", "matched"), [
    (..., 2.0, "Write your prediction first, as a number", False),
    ((1 + 0.25) ** 6, 1.25 ** 6, "Yes: the engine measured 3.8147", True),
    (1.25 * 6, 1.25 ** 6, "Not quite: the engine measured 3.8147, you predicted 7.5. Hint.", False),
    (0.0, 0.0, "Yes", True),
    ("Grows ", "grows", "Yes: the engine measured grows", True),
    ("shrinks", "grows", "Not quite: the engine measured grows, you predicted shrinks.", False),
    (1.0, "grows", "Write your prediction first, as a word", False),
])
def test_an_exercise_check_says_whether_a_prediction_holds(
        capsys: pytest.CaptureFixture[str], prediction: object, measured: object, says: str,
        matched: bool) -> None:
    assert lab_notebook.check(prediction, measured, "Hint.") is None  # a cell shows only words
    said = capsys.readouterr().out
    assert said.startswith(says) and said.startswith("Yes") is matched


@pytest.mark.slow
def test_the_exercises_done_wrong_and_right() -> None:
    # The gradients notebook's exercises, each answered wrongly and then rightly.
    notebook = _published("gradient-flow")
    asks = [cell for cell in notebook.cells if "prediction = ..." in cell.source]
    assert len(asks) >= 3
    answers = {"wrong": ("1.25 * layers", "0.5", '"shrinks"'),
               "right": ("(1 + factor) ** layers", "1.0", '"grows"')}
    blanks = [ask.source for ask in asks]
    for kind, values in answers.items():
        for ask, blank, value in zip(asks, blanks, values, strict=True):
            ask.source = blank.replace("prediction = ...", f"prediction = {value}")
        printed = _run(notebook)
        said = re.findall(r"^(Yes|Not quite):", printed, re.M)
        assert said == (["Not quite"] * 3 if kind == "wrong" else ["Yes"] * 3), (kind, printed)


def test_every_lab_page_links_its_notebook() -> None:
    published = notebook_files(ROOT)
    assert sorted(published) == [f"{NOTEBOOKS}/{lab}.ipynb" for lab in sorted(LABS)]
    for lab in LABS:
        page = (ROOT / "docs" / "labs" / f"{lab}.md").read_text(encoding="utf-8")
        assert f'notebook("{lab}")' in page, lab
        notebook = nbformat.reads(published[f"{NOTEBOOKS}/{lab}.ipynb"].decode(), as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.kernelspec.name == "residual-chapter"  # the README's kernel
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert all(cell.execution_count == n for n, cell in enumerate(code, 1))  # in order
        assert not any("execution" in cell.metadata for cell in code)  # no timings
        assert not any(output.output_type == "error" for cell in code for output in cell.outputs)


def _broken(tmp_path: Path, text: str) -> Path:
    (tmp_path / NOTEBOOKS).mkdir()
    (tmp_path / NOTEBOOKS / "lab.py").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("text", "line", "message"), [
    ("# %%\nx = 1\n\n# %% [markdown]\n# After 42 steps\n", 5,
     "a Markdown cell holds the number '42'"),
    ("# %%\nx = (\n", 2, "not Python"),
    # every marker jupytext reads as a Markdown cell is held to the rule
    *((f"# %%\nx = 1\n\n{marker}\n# Words\n# After 42 steps\n", 6,
       "a Markdown cell holds the number '42'")
      for marker in ("# %% [md]", "#%% [markdown]", "# %% Title [markdown]")),
    ("# %%\nx = " + "1+" * 100_000 + "1\n", None, "nested too deeply"),
], ids=["markdown-number", "not-python", "md-marker", "no-space-marker", "titled-marker",
        "too-deep"])
def test_a_bad_notebook_source_fails_at_its_line(tmp_path: Path, text: str, line: int,
                                                 message: str) -> None:
    with pytest.raises(BuildError) as caught:
        notebook_files(_broken(tmp_path, text))
    assert (caught.value.path, caught.value.line) == (f"{NOTEBOOKS}/lab.py", line)
    assert message in caught.value.message


def test_a_notebook_linked_from_outside_the_project_is_refused(tmp_path: Path) -> None:
    (tmp_path / "private.py").write_text("# %%\nsecret = 1\n")
    (tmp_path / NOTEBOOKS).mkdir()
    (tmp_path / NOTEBOOKS / "lab.py").symlink_to(tmp_path / "private.py")
    with pytest.raises(BuildError, match="is a symbolic link or not a file") as caught:
        notebook_files(tmp_path)
    assert caught.value.path == f"{NOTEBOOKS}/lab.py"


def _recorded(tmp_path: Path, text: str) -> Path:
    """A project whose one notebook, ``text``, has an executed record of its cells."""
    root = _broken(tmp_path, text)
    (root / "records" / NOTEBOOKS).mkdir(parents=True)
    (root / "records" / NOTEBOOKS / "lab.ipynb").write_bytes(
        notebook_records.execute(root / NOTEBOOKS / "lab.py", 60))
    return root


SOURCE = "# %% [markdown]\n# Words\n\n# %%\nx = 1\nprint(x + 1)\n\n# %%\ny = 2\n"


def test_a_notebook_executed_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    root = _recorded(tmp_path, SOURCE)
    first = notebook_files(root)[f"{NOTEBOOKS}/lab.ipynb"]
    assert first == notebook_records.execute(root / NOTEBOOKS / "lab.py", 60)
    notebook = nbformat.reads(first.decode(), as_version=4)
    assert [cell.id for cell in notebook.cells] == ["lab-1", "lab-2", "lab-3"]
    assert notebook.cells[1].outputs[0].text == "2\n"
    assert notebook.metadata.language_info == {"name": "python"}  # no patch version


@pytest.mark.parametrize(("edit", "line", "message"), [
    (lambda text: text.replace("y = 2", "y = 3"), 8, "changed since records/notebooks/lab.ipynb "
     "was executed (cell 3 differs)"),
    (lambda text: text + "\n# %%\nz = 4\n", 11, "(cell 4 differs)"),
])
def test_a_record_of_another_source_fails_at_the_first_changed_cell(
        tmp_path: Path, edit: Any, line: int, message: str) -> None:
    root = _recorded(tmp_path, SOURCE)
    (root / NOTEBOOKS / "lab.py").write_text(edit(SOURCE), encoding="utf-8")
    with pytest.raises(BuildError) as caught:
        notebook_files(root)
    assert (caught.value.path, caught.value.line) == (f"{NOTEBOOKS}/lab.py", line)
    assert message in caught.value.message and "./dev record" in caught.value.message


def test_a_notebook_without_its_record_is_refused(tmp_path: Path) -> None:
    root = _broken(tmp_path, SOURCE)
    with pytest.raises(BuildError, match=r"has no executed record, records/notebooks/lab\.ipynb"):
        notebook_files(root)
    (root / "records" / NOTEBOOKS).mkdir(parents=True)
    (tmp_path / "elsewhere.ipynb").write_text("{}")
    (root / "records" / NOTEBOOKS / "lab.ipynb").symlink_to(tmp_path / "elsewhere.ipynb")
    with pytest.raises(BuildError, match="a file, not a link"):
        notebook_files(root)


def test_a_failing_cell_fails_the_record_naming_the_notebook(tmp_path: Path) -> None:
    root = _broken(tmp_path, "# %%\n1 / 0\n")
    with pytest.raises(EngineError) as caught:
        notebook_records.execute(root / NOTEBOOKS / "lab.py", 60)
    assert str(caught.value) == ("notebooks/lab.py: a cell failed: ZeroDivisionError: "
                                 "division by zero")
