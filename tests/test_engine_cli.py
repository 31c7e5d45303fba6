"""Tests for engine/__main__.py, run as a real subprocess (`python -m engine ...`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import GOLDEN_REPORT, GOLDEN_TRACE, ROOT


def engine(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )


def test_report_prints_the_golden_report():
    result = engine("report")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == GOLDEN_REPORT.read_text(encoding="utf-8")


def test_trace_prints_the_golden_trace():
    result = engine("trace")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == GOLDEN_TRACE.read_text("utf-8")


def test_trace_output_file_is_written_whole_and_replaced(tmp_path):
    target = tmp_path / "chapter.trace"
    target.write_text("stale\n", encoding="utf-8")
    result = engine("trace", "-o", str(target))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    expected = GOLDEN_TRACE.read_bytes()
    assert target.read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chapter.trace"]  # no temp left


def test_run_prints_exactly_the_trace_lines_of_the_experiments_named():
    result = engine("run", "residual-connections-v2", "scaled", "silent-scale")
    assert (result.returncode, result.stderr) == (0, "")
    golden = GOLDEN_TRACE.read_text("utf-8").splitlines()
    wanted = [line for line in golden if line.startswith(("SCALED ", "SILENT-SCALE "))]
    assert len(wanted) > 2 and result.stdout.splitlines() == wanted


@pytest.mark.parametrize("args", [["--help"], ["report", "--help"], ["trace", "--help"],
                                  ["run", "--help"]])
def test_help(args):
    result = engine(*args)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python -m engine")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "engine: error: the following arguments are required: COMMAND (see --help)"),
        (["bogus"], "engine: error: argument COMMAND: invalid choice: 'bogus'"),
        (["run", "residual-connections-v2", "nope"],
         "engine: error: run: trace residual-connections-v2 has no experiment 'nope'; it has "
         "primary, zero-branch,"),
        (["run", "no-such-v1", "x"], "engine: error: trace: no trace 'no-such-v1'"),
    ],
)
def test_user_errors_are_one_line_with_exit_status_2(args, message):
    result = engine(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(message)
    assert "Traceback" not in result.stderr


def test_output_that_cannot_be_written_is_one_line_with_exit_status_1(tmp_path):
    # The engine ran fine; only writing failed: exit status 1, not the usage errors' 2.
    missing = engine("trace", "-o", "/nonexistent-dir/x.trace")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == ("engine: error: cannot write the trace to "
                              "/nonexistent-dir/x.trace: No such file or directory\n")
    with open("/dev/full", "w") as device:
        full = subprocess.run([sys.executable, "-m", "engine", "report"], cwd=ROOT,
                              stdout=device, stderr=subprocess.PIPE, text=True, timeout=120)
    assert full.returncode == 1
    assert full.stderr == ("engine: error: cannot write the report to standard output: "
                           "No space left on device\n")


def test_output_replaces_only_a_regular_file(tmp_path):
    target = tmp_path / "kept.trace"
    target.write_text("precious\n")
    link = tmp_path / "link.trace"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.trace"
    os.mkfifo(fifo)
    for path in (tmp_path, link, fifo):
        result = engine("trace", "-o", str(path))
        assert result.returncode == 1
        assert result.stderr == f"engine: error: refusing to replace {path}: not a regular file\n"
    assert link.is_symlink() and target.read_text() == "precious\n"
    assert fifo.exists() and not fifo.is_file()
    regular = tmp_path / "out.trace"
    regular.write_text("old\n")
    assert engine("trace", "-o", str(regular)).returncode == 0
    assert regular.read_text().startswith("TRACE residual-connections-v2 BEGIN")


@pytest.mark.parametrize(("length", "code"), [(250, 0), (300, 1)])
def test_an_output_name_as_long_as_the_system_allows_is_written_and_a_longer_one_is_one_line(
        tmp_path: Path, length: int, code: int) -> None:
    target = tmp_path / ("t" * (length - len(".trace")) + ".trace")
    result = engine("trace", "-o", str(target))
    assert result.returncode == code and "Traceback" not in result.stderr, result.stderr
    assert (target.name in os.listdir(tmp_path)) == (code == 0)
    assert len(result.stderr.splitlines()) == code
    if code:
        assert result.stderr.endswith(": File name too long\n")


def test_numpy_feature_variables_both_set_are_one_line_not_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "engine", "trace"], cwd=ROOT, capture_output=True, text=True,
        timeout=60, check=False, env={**os.environ, "ENGINE_NUMERICS": "native",
                                      "NPY_ENABLE_CPU_FEATURES": "AVX2",
                                      "NPY_DISABLE_CPU_FEATURES": "AVX512F"})
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("engine: error: numerics: NPY_DISABLE_CPU_FEATURES and "
                             "NPY_ENABLE_CPU_FEATURES are both set, and numpy starts with one "
                             "at most: unset one of them\n")
