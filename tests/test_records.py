"""The recorded results (engine/records.py, engine/record_checks.py, `python -m engine record`
and `run`): fresh records are read, never recomputed; a stale one is named with the command
that remakes it; a tampered value is found at its line; CI's selection of what to rerun."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import RECORDS_DIR, ROOT

from engine import cell_records, record_checks, records
from engine.__main__ import _records, build_parser
from engine.errors import EngineError
from engine.numerics import current
from engine.record_command import record_command
from tracefile.schemas import CHAPTER_TRACE, SCHEMAS

CHAPTER_FILE = SCHEMAS[CHAPTER_TRACE].file_name


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of records/ a test may tamper with."""
    return Path(shutil.copytree(RECORDS_DIR, tmp_path / "records"))


def test_every_committed_record_is_fresh() -> None:
    every = records.status() + records.notebook_status()
    stale = [(s.trace_id, s.reason) for s in every if not s.fresh]
    assert stale == [], "run ./dev record and commit records/"
    assert [s.trace_id for s in records.notebook_status()] == [
        "notebooks/gradient-flow.ipynb", "notebooks/residual-stream.ipynb"]


NOTEBOOK = "notebooks/gradient-flow.ipynb"


def test_an_executed_notebook_is_stale_when_its_trace_key_or_file_changed(copy) -> None:
    def reason() -> str:
        return {s.trace_id: s.reason for s in records.notebook_status(copy)}[NOTEBOOK]

    assert reason() == ""
    trace = copy / SCHEMAS["gradient-flow-v4"].file_name
    trace.write_text(trace.read_text() + "\n")  # the trace it checks its runs against
    assert reason() == ("its source, the code it runs or its lab's trace changed since it was "
                        "executed")
    (copy / NOTEBOOK).unlink()
    assert reason() == f"records/{NOTEBOOK} is missing"
    keys = json.loads((copy / "keys.json").read_text())
    del keys[NOTEBOOK]
    (copy / "keys.json").write_text(json.dumps(keys))
    assert reason() == "never recorded"


def test_check_names_a_stale_notebook_and_the_command(monkeypatch) -> None:
    stale = records.Status(NOTEBOOK, "k", False, "never recorded")
    monkeypatch.setattr(records, "notebook_status", lambda folder=None: [stale])
    with pytest.raises(EngineError) as error:
        record("--check")
    assert f"./dev record {NOTEBOOK}" in str(error.value)


@pytest.mark.parametrize("mode", [(), ("--status",), ("--check",), ("--verify",)])
def test_a_notebook_that_does_not_exist_is_named_with_those_that_do(mode) -> None:
    with pytest.raises(EngineError) as error:
        record(*mode, "notebooks/gone.ipynb")
    assert str(error.value) == ("record: no notebook 'notebooks/gone.ipynb'; there are "
                                "notebooks/gradient-flow.ipynb, notebooks/residual-stream.ipynb")


@pytest.mark.slow
def test_verify_finds_a_tampered_notebook_output_at_its_line(copy) -> None:
    lines = (copy / NOTEBOOK).read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if "peaks at 3 branches" in line)
    lines[number] = lines[number].replace("peaks at 3", "peaks at 4")
    (copy / NOTEBOOK).write_text("".join(lines))
    problems = records.verify_notebooks([NOTEBOOK], io.StringIO(), copy)
    assert len(problems) == 1
    assert problems[0].startswith(f"{copy / NOTEBOOK}:{number + 1}: the record differs")


def test_a_record_is_stale_when_its_key_or_file_is_not_there(copy) -> None:
    keys = json.loads((copy / "keys.json").read_text())
    keys[CHAPTER_TRACE] = "0" * 64
    del keys["gradient-flow-v4"]
    (copy / "keys.json").write_text(json.dumps(keys))
    (copy / SCHEMAS["residual-stream-v4"].file_name).unlink()
    found = {s.trace_id: s.reason for s in records.status(folder=copy)}
    assert found == {CHAPTER_TRACE: "its code or the libraries changed since it was recorded",
                     "gradient-flow-v4": "never recorded",
                     "residual-stream-v4": "records/residual-stream-v4.trace is missing"}


def record(*args: str) -> None:
    record_command(build_parser().parse_args(["record", *args]))


def test_check_names_the_stale_record_and_the_command(monkeypatch) -> None:
    stale = records.Status("gradient-flow-v4", "k", False, "never recorded")
    monkeypatch.setattr(records, "status", lambda ids=None: [stale])
    with pytest.raises(EngineError) as error:
        record("--check")
    assert "gradient-flow-v4 (never recorded)" in str(error.value)
    assert "./dev record gradient-flow-v4" in str(error.value)


def test_record_refuses_off_the_reference_numerics(monkeypatch) -> None:
    import dataclasses

    import engine.numerics

    off = dataclasses.replace(engine.numerics.current(), kernel="SkylakeX")
    monkeypatch.setattr(engine.numerics, "current", lambda: off)
    with pytest.raises(EngineError, match="not the reference kernels"):
        record("--all", CHAPTER_TRACE)


def test_recording_writes_the_trace_and_its_key(copy) -> None:
    (copy / CHAPTER_FILE).write_text("stale\n")
    written = records.record([CHAPTER_TRACE], io.StringIO(), copy)
    assert written == [CHAPTER_FILE, records.REPORT_NAME]
    assert (copy / CHAPTER_FILE).read_bytes() == (RECORDS_DIR / CHAPTER_FILE).read_bytes()
    assert json.loads((copy / "keys.json").read_text())[CHAPTER_TRACE] == \
        records.trace_key(CHAPTER_TRACE)


def test_verify_finds_a_one_value_tamper_at_its_line(copy) -> None:
    lines = (copy / CHAPTER_FILE).read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if re.search(r"=-?\d+\.\d", line))
    lines[number] = re.sub(r"=(-?\d+)\.(\d)", lambda m: f"={m[1]}.{(int(m[2]) + 1) % 10}",
                           lines[number], count=1)
    (copy / CHAPTER_FILE).write_text("".join(lines))
    problems = records.verify([CHAPTER_TRACE], io.StringIO(), copy)
    assert len(problems) == 1
    assert problems[0].startswith(f"{copy / CHAPTER_FILE}:{number + 1}: the record differs")
    assert records.verify([CHAPTER_TRACE], io.StringIO()) == []  # the true record reproduces


def test_run_prints_an_experiments_lines_from_the_record() -> None:
    trace = (RECORDS_DIR / SCHEMAS["gradient-flow-v4"].file_name).read_text().splitlines()
    for name, specs in SCHEMAS["gradient-flow-v4"].experiments.items():
        printed = _records("gradient-flow-v4", [name], fresh=False).splitlines()
        kinds = {spec.kind for spec in specs}
        assert printed == [line for line in trace if line.split(" ", 1)[0] in kinds], name


def test_a_recorded_cell_is_rebuilt_and_retrained_to_its_line() -> None:
    refs = [ref for ref in record_checks.sample("seed", [])
            if ref.label.startswith("gradient-flow")][:2]  # cells of a moment
    assert refs, "no cell records"
    done, problems = record_checks.rerun_cells(refs, io.StringIO())
    assert done == 2
    if current().reference:
        assert problems == []
    else:  # other kernels, other last bits: each cell is reported at its line, nothing worse
        assert all(": grid gradient-flow " in problem and "its record says" in problem
                   for problem in problems), problems


def test_a_tampered_cell_line_is_found(tmp_path, monkeypatch) -> None:
    label = "gradient-flow grid"
    path = cell_records.file_of(label)
    text = path.read_text().splitlines(keepends=True)
    line = json.loads(text[6])
    line["result"]["final_loss"]["values"] = [line["result"]["final_loss"]["values"][0] * 1.001]
    text[6] = json.dumps(line, sort_keys=True) + "\n"
    (tmp_path / path.name).write_text("".join(text))
    monkeypatch.setattr(cell_records, "CELLS", tmp_path)
    ref = record_checks.CellRef(label, cell_records.read(label)[line["key"]])
    _, problems = record_checks.rerun_cells([ref], io.StringIO())
    assert len(problems) == 1 and f"{tmp_path / path.name}:7: grid {label}" in problems[0]
    assert "final_loss" in problems[0]


def test_a_rebuilt_cell_may_only_call_the_train_modules_classes() -> None:
    module = "engine.experiments.gradient_flow.cells"
    with pytest.raises(EngineError, match="not a cell of"):
        cell_records.rebuild("__import__('os').system('true')", module)
    with pytest.raises(EngineError, match="not a cell of"):
        cell_records.rebuild("StackCell(setting=open('x'))", module)


def test_the_sample_is_drawn_from_the_seed_and_leaves_out_what_was_rerun() -> None:
    one, again, other = (record_checks.sample(seed, []) for seed in ("a", "a", "b"))
    assert [r.record.key for r in one] == [r.record.key for r in again]
    assert [r.record.key for r in one] != [r.record.key for r in other]
    left = record_checks.sample("a", one[:3])
    assert len(left) == len(one) - 3


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          timeout=120).stdout


@pytest.mark.slow
def test_a_one_value_tamper_committed_alone_fails_ci(tmp_path) -> None:
    """The CI command on a clone whose last commit edits one recorded value, and nothing else."""
    clone = tmp_path / "clone"
    git(ROOT, "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone))
    if git(clone, "status", "--porcelain", "--", "records", "engine", "tracefile"):
        pytest.fail("the clone differs from the checkout")
    path = clone / "records" / "cells" / "gradient-flow-grid.jsonl"
    text = path.read_text().splitlines(keepends=True)
    line = json.loads(text[10])
    line["result"]["final_loss"]["values"][0] += 1e-9
    text[10] = json.dumps(line, sort_keys=True) + "\n"
    path.write_text("".join(text))
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a nudge")
    done = subprocess.run([sys.executable, "-m", "engine", "record", "--verify-changed",
                           "--budget", "0"], cwd=clone, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "CI_BASE": "HEAD~1"})
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("engine: error: records/cells/gradient-flow-grid.jsonl:11: grid "
                           "gradient-flow grid: cell StackCell("), last
    assert "final_loss" in last and "1 cell record(s) changed" in done.stderr


@pytest.mark.slow
def test_every_rerun_command_on_the_built_pages_runs_as_printed(built_site: Path) -> None:
    """Each "Rerun it" command, pasted at the repository's root, prints its section's lines of
    the published trace, from the record."""
    import html

    commands = sorted({html.unescape(found) for page in built_site.rglob("*.html")
                       for found in re.findall(r'<code class="rerun">([^<]+)</code>',
                                               page.read_text(encoding="utf-8"))})
    assert len(commands) >= len(SCHEMAS["gradient-flow-v4"].experiments), commands
    for command in commands:
        trace_id = command.split()[2]
        published = (built_site / "trace" / SCHEMAS[trace_id].file_name).read_text()
        done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr)
        printed = done.stdout.splitlines()
        assert printed and set(printed) <= set(published.splitlines()), command
        assert "stale" not in done.stderr, (command, done.stderr)
