"""tests/refresh_goldens.py (``./dev goldens``) without running the engine: the comparison and
its report on a copy of the golden folder, the drawing tests it finds, its refusal off the
reference numerics, and its help."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import refresh_goldens
from paths import GOLDEN_DIR, GOLDEN_REPORT, GOLDEN_TRACE
from refresh_goldens import compare, drawing_tests, main, write_changed

from engine.numerics import current


@pytest.fixture
def golden_copy(tmp_path: Path) -> Path:
    copy = Path(shutil.copytree(GOLDEN_DIR, tmp_path / "golden"))
    for recorded in (GOLDEN_TRACE, GOLDEN_REPORT):  # the traces live in records/
        shutil.copy(recorded, copy / recorded.name)
    return copy


def test_compare_tells_changed_from_unchanged_and_writes_only_the_changed(golden_copy):
    lines = GOLDEN_REPORT.read_text(encoding="utf-8").splitlines(keepends=True)
    report = "".join([lines[0], "brand-new=1\n", *lines[2:]]).encode("utf-8")
    trace = GOLDEN_TRACE.read_bytes()
    fresh = {GOLDEN_REPORT.name: report, GOLDEN_TRACE.name: trace, "dot/extra.dot": b"graph{}\n"}
    before = (golden_copy / GOLDEN_TRACE.name).stat().st_mtime_ns

    changed, unchanged, new = compare(fresh, golden_copy)
    assert (changed.changed, changed.new, changed.added, changed.removed) == (True, False, 1, 1)
    assert changed.excerpt[1:] == (f"-{lines[1].rstrip()}", "+brand-new=1")
    assert changed.summary().startswith(f"{GOLDEN_REPORT.name}: changed, +1 -1 lines\n    @@")
    assert not unchanged.changed and unchanged.summary() == f"{GOLDEN_TRACE.name}: unchanged"
    assert new.new and new.summary().startswith("dot/extra.dot: new, +1 -0 lines")

    write_changed(fresh, [changed, unchanged, new], golden_copy)
    assert (golden_copy / GOLDEN_REPORT.name).read_bytes() == report
    assert (golden_copy / "dot" / "extra.dot").read_bytes() == b"graph{}\n"
    assert (golden_copy / GOLDEN_TRACE.name).stat().st_mtime_ns == before
    assert not any(item.changed for item in compare(fresh, golden_copy))


def test_it_finds_the_drawing_tests():
    assert {path.name for path in drawing_tests()} >= {"test_dot.py", "test_plots.py",
                                                       "test_explorer.py"}


def test_it_refuses_off_the_reference_numerics(monkeypatch, capsys):
    off = dataclasses.replace(current(), kernel="SkylakeX")
    monkeypatch.setattr(refresh_goldens, "pin", lambda: None)
    monkeypatch.setattr(refresh_goldens, "current", lambda: off)
    monkeypatch.setattr(refresh_goldens, "refresh_drawings", lambda skip: pytest.fail("ran"))
    assert main([]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "off the reference numerics" in error and "--force" in error


def test_help(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    assert "--force" in capsys.readouterr().out
