"""The labs' notebooks (notebooks/, sitebuild/notebooks.py): each one executed in a Python
kernel (nbclient), as a reader would run the file the lab page offers, and every trace line it
prints held against the published trace (the golden, which the site publishes byte for byte:
test_gates_published.py); the check shown failing on a changed value; the build's rules for a
notebook's source, each shown failing at its line.

The comparison is exact: the notebook pins the numerics as the engine's runs do
(engine/numerics.py), so its values have the trace's bits.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient
from paths import RECORDS_DIR, ROOT

from sitebuild.errors import BuildError
from sitebuild.notebooks import NOTEBOOKS, notebook_files
from tracefile.schemas import SCHEMAS

#: Each notebook and the trace whose lines it prints.
LABS = {"gradient-flow": "gradient-flow-v3", "residual-stream": "residual-stream-v3"}
_NAMED = re.compile(r'experiment_lines\(LAB, "([a-z-]+)"')

# One worker runs the module, so the notebooks execute once a session, not once a worker.
pytestmark = [pytest.mark.xdist_group("notebooks"), pytest.mark.longest]


def compare_with_trace(printed: str, published: str, trace_name: str) -> list[str]:
    """What is wrong with the record lines in ``printed`` against the trace text
    ``published``: each one that is not a line of the trace, named beside the trace's own line
    of that record (kind, and key for a keyed record); nothing printed is wrong too."""
    rows = published.splitlines()
    kinds = {row.split(" ", 1)[0] for row in rows[1:-1]}
    problems, matched = [], 0
    for line in printed.splitlines():
        fields = line.split(" ")
        if fields[0] not in kinds or len(fields) < 2 or "=" not in fields[1]:
            continue  # the notebook's own words, not a record
        if line in rows:
            matched += 1
            continue
        same = [(n, row) for n, row in enumerate(rows, 1) if row.split(" ", 1)[0] == fields[0]]
        if len(same) > 1:
            same = [(n, row) for n, row in same if row.split(" ")[1] == fields[1]]
        where = f"{trace_name}:{same[0][0]} holds {same[0][1]!r}" if same else \
            f"{trace_name} has no such record"
        problems.append(f"printed {line!r}, but {where}")
    if not matched and not problems:
        problems.append(f"printed no record of {trace_name}")
    return problems


def _printed(notebook: nbformat.NotebookNode) -> str:
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", ()) if output.output_type == "stream")


@pytest.fixture(scope="module")
def executed() -> dict[str, str]:
    """Each notebook as the site publishes it, executed: what it printed, by name."""
    printed = {}
    for path, data in notebook_files(ROOT).items():
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
        NotebookClient(notebook, timeout=900, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT)}}).execute()
        printed[Path(path).stem] = _printed(notebook)
    return printed


def _published(lab: str) -> str:
    return (RECORDS_DIR / SCHEMAS[LABS[lab]].file_name).read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("lab", sorted(LABS))
def test_a_notebook_prints_the_published_values(executed: dict[str, str], lab: str) -> None:
    assert compare_with_trace(executed[lab], _published(lab), LABS[lab]) == []
    # Every experiment the notebook names printed its records.
    source = (ROOT / NOTEBOOKS / f"{lab}.py").read_text(encoding="utf-8")
    schema, kinds = SCHEMAS[LABS[lab]], {row.split(" ", 1)[0]
                                         for row in executed[lab].splitlines()}
    names = _NAMED.findall(source)
    assert names, f"{lab}: the notebook prints no experiment's lines"
    for name in names:
        assert kinds & {spec.kind for spec in schema.experiments[name]}, name


@pytest.mark.slow
def test_the_check_fails_on_a_changed_value(executed: dict[str, str]) -> None:
    lab = "gradient-flow"
    published = _published(lab)
    line = next(row for row in executed[lab].splitlines() if row.startswith("TEN-LAYERS "))
    value = re.search(r"plain=(\S+)", line).group(1)
    tampered = published.replace(f"plain={value} ", f"plain={value}1 ", 1)
    assert tampered != published
    problems = compare_with_trace(executed[lab], tampered, LABS[lab])
    number = tampered.splitlines().index(line.replace(f"plain={value} ", f"plain={value}1 ")) + 1
    assert problems == [f"printed {line!r}, but {LABS[lab]}:{number} holds "
                        f"{tampered.splitlines()[number - 1]!r}"]


def test_the_check_wants_records() -> None:
    published = _published("gradient-flow")
    assert compare_with_trace("only words\n", published, "t") == ["printed no record of t"]
    assert compare_with_trace("NOPE-RECORD a=b\n", published, "t") == \
        ["printed no record of t"]


def test_every_lab_page_links_its_notebook() -> None:
    published = notebook_files(ROOT)
    assert sorted(published) == [f"{NOTEBOOKS}/{lab}.ipynb" for lab in sorted(LABS)]
    for lab in LABS:
        page = (ROOT / "docs" / "labs" / f"{lab}.md").read_text(encoding="utf-8")
        assert f'notebook("{lab}")' in page, lab
        notebook = nbformat.reads(published[f"{NOTEBOOKS}/{lab}.ipynb"].decode(), as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.kernelspec.name == "python3"
        assert not any(cell.get("outputs") for cell in notebook.cells)


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


def test_the_same_source_gives_the_same_notebook(tmp_path: Path) -> None:
    root = _broken(tmp_path, "# %% [markdown]\n# Words\n\n# %%\nx = 1\n")
    first = notebook_files(root)
    assert first == notebook_files(root)
    cells = nbformat.reads(first[f"{NOTEBOOKS}/lab.ipynb"].decode(), as_version=4).cells
    assert [cell.id for cell in cells] == ["lab-1", "lab-2"]
    assert jupytext.reads(first[f"{NOTEBOOKS}/lab.ipynb"].decode(), fmt="ipynb").cells[1].source \
        == "x = 1"
