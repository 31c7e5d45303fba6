"""Tests for engine/__main__.py, run as a real subprocess (`python -m engine ...`)."""

from __future__ import annotations

import subprocess
import sys

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


@pytest.mark.parametrize("args", [["--help"], ["report", "--help"], ["trace", "--help"]])
def test_help(args):
    result = engine(*args)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python -m engine")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "engine: error: the following arguments are required: COMMAND (see --help)"),
        (["bogus"], "engine: error: argument COMMAND: invalid choice: 'bogus'"),
        (["trace", "-o", "/nonexistent-dir/x.trace"],
         "engine: error: cannot write the trace to /nonexistent-dir/x.trace: "
         "No such file or directory"),
    ],
)
def test_user_errors_are_one_line_with_exit_status_2(args, message):
    result = engine(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(message)
    assert "Traceback" not in result.stderr


def test_writing_onto_a_directory_is_a_user_error(tmp_path):
    result = engine("trace", "-o", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"engine: error: cannot write the trace to {tmp_path}: Is a directory\n"
    assert list(tmp_path.iterdir()) == []
