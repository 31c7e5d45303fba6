"""Tests for sitebuild/engine_runs.py: one job per declared trace, each cached under the
engine's and the trace contract's files, its arguments and the variables that choose the
kernels."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sitebuild import engine_runs
from sitebuild.cache import Cache
from sitebuild.paths import served_path
from tracefile import SCHEMAS, TraceSet, parse_trace

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "residual-connections-v2"
LAB = "residual-stream-v4"


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for name in ("engine", "tracefile"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def job(name: str) -> engine_runs.EngineJob:
    return next(j for j in engine_runs.engine_jobs() if j.name == name)


def test_one_job_per_declared_trace_the_chapters_with_its_report() -> None:
    jobs = engine_runs.engine_jobs()
    assert [j.name for j in jobs] == list(SCHEMAS)
    assert job(CHAPTER).files == (f"{CHAPTER}.trace", "learner-report.txt")


def test_a_job_key_follows_the_engine_and_the_trace_contract(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    before = engine_runs.job_key(root, job(CHAPTER))
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("a page is not an engine input\n")
    (root / "engine" / "__pycache__").mkdir(exist_ok=True)
    (root / "engine" / "__pycache__" / "x.pyc").write_bytes(b"bytecode")
    assert engine_runs.job_key(root, job(CHAPTER)) == before
    for edited in ("engine/worked_example/stack.py", "tracefile/schema.py"):
        with (root / edited).open("a") as f:
            f.write("\n# edited\n")
        assert engine_runs.job_key(root, job(CHAPTER)) != before, edited
        before = engine_runs.job_key(root, job(CHAPTER))


def test_a_job_key_follows_the_variables_that_choose_the_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = engine_runs.job_key(ROOT, job(LAB))
    for name in engine_runs.NUMERICS_ENVIRONMENT:
        with monkeypatch.context() as changed:
            changed.setenv(name, os.environ.get(name, "") + "-changed")
            assert engine_runs.job_key(ROOT, job(LAB)) != before, name
    assert engine_runs.job_key(ROOT, job(LAB)) == before


def off_reference(text: str) -> str:
    """A lab's golden trace as another machine writes its NUMERICS record."""
    line = next(ln for ln in text.splitlines() if ln.startswith("NUMERICS "))
    return text.replace(line, line.replace("reference=true", "reference=false").replace(
        "kernel=Haswell", "kernel=NEOVERSEN1").replace("simd=X86_V2,X86_V3", "simd=ASIMD"))


def test_the_note_names_each_trace_computed_off_the_reference_numerics() -> None:
    golden = {trace_id: (ROOT / "records" / schema.file_name).read_text("utf-8")
              for trace_id, schema in SCHEMAS.items()}

    def traces(off: tuple[str, ...]) -> TraceSet:
        return TraceSet({trace_id: parse_trace(off_reference(text) if trace_id in off else text,
                                               trace_id, SCHEMAS[trace_id])
                         for trace_id, text in golden.items()}, CHAPTER)

    assert engine_runs.off_reference_note(traces(())) is None
    note = engine_runs.off_reference_note(traces((LAB,)))
    assert note == (f"off the reference numerics: {LAB} (NEOVERSEN1 BLAS kernels on 1 "
                    "thread(s), numpy loops up to ASIMD) computed their numbers with other "
                    "kernels, so they can differ from the published site's (docs/building.md)")
    both = engine_runs.off_reference_note(traces(("gradient-flow-v4", LAB)))
    assert both is not None and "gradient-flow-v4 (NEOVERSEN1" in both and f", {LAB} (" in both


def test_fresh_records_are_read_and_a_stale_one_runs_once_then_is_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache(tmp_path / "cache")
    recorded = engine_runs.run_engine(ROOT, cache, tmp_path)
    assert [r.status for r in recorded] == ["recorded"] * len(recorded)
    for result in recorded:
        assert all(data == (ROOT / "records" / name).read_bytes()
                   for name, data in result.files.items())
    monkeypatch.setattr(engine_runs, "record_status", lambda root: {CHAPTER: "edited"})
    told, said = [], []
    first = engine_runs.run_engine(ROOT, cache, tmp_path, lambda todo, why: told.append(why),
                                   said.append)
    assert [r.status for r in first] == ["ran", "recorded", "recorded"]
    assert told == [{CHAPTER: "edited"}]
    again = engine_runs.run_engine(ROOT, cache, tmp_path)
    assert [r.status for r in again] == ["cached", "recorded", "recorded"]
    assert [r.files for r in again] == [r.files for r in recorded]
    assert not any(tmp_path.glob("engine-*")), "the engine's scratch folder was left behind"


def test_the_engine_says_which_records_are_stale() -> None:
    assert engine_runs.record_status(ROOT) == {}


def test_an_engine_crash_is_named_by_the_file_and_line_it_happened_at() -> None:
    job = engine_runs.EngineJob("demo", ("t.trace",), ("trace", "-o", "t.trace"))
    crash = ('Traceback (most recent call last):\n  File "/x/engine/__main__.py", line 9, in m\n'
             '  File "/x/engine/ops/norms.py", line 42\n    def f(:\n'
             "SyntaxError: invalid syntax\n")
    err = engine_runs.engine_failure(job, 1, crash)
    assert (err.path, err.line) == ("/x/engine/ops/norms.py", 42)
    assert "exited with 1: SyntaxError: invalid syntax" in str(err)
    plain = engine_runs.engine_failure(job, 2, "engine: no such command\n")
    assert (plain.path, plain.line) == ("engine", None)


@pytest.mark.parametrize(("site_url", "path"), [
    (None, "/"), ("http://127.0.0.1:8000/", "/"), ("https://host", "/"),
    ("https://host/sub/", "/sub/"), ("https://host/sub", "/sub/"), ("https://host/a/b", "/a/b/"),
])
def test_the_served_path_always_ends_in_a_slash(site_url: str | None, path: str) -> None:
    assert served_path(site_url) == path


def test_a_relative_cell_cache_is_taken_from_where_the_build_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitebuild.engine_runs import CELL_CACHE, _engine_env

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CELL_CACHE, "mine/cells")
    assert _engine_env(ROOT, tmp_path / "cache")[CELL_CACHE] == str(tmp_path / "mine/cells")
    monkeypatch.delenv(CELL_CACHE)
    assert _engine_env(ROOT, tmp_path / "cache")[CELL_CACHE] == str(tmp_path / "cache/cells")


def test_an_interrupt_as_the_time_limit_starts_leaves_nothing_to_wait_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SIGTERM landing while the limit's timer thread starts: once, a build printed its
    # "interrupted" line and then waited at exit for a timer set for hours.
    import threading

    started: list[threading.Timer] = []
    real_start = threading.Timer.start

    def start_then_interrupt(timer: threading.Timer) -> None:
        real_start(timer)
        started.append(timer)
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Timer, "start", start_then_interrupt)
    killed: list[int] = []
    real_kill = engine_runs.subprocess.Popen.kill
    monkeypatch.setattr(engine_runs.subprocess.Popen, "kill",
                        lambda proc: (killed.append(proc.pid), real_kill(proc))[-1])
    job = engine_runs.engine_jobs()[0]
    try:
        with pytest.raises(KeyboardInterrupt):
            engine_runs._run_job(ROOT, job, tmp_path, tmp_path / "cache", lambda line: None)
        [timer] = started
        assert timer.daemon  # the interpreter never waits for it
        timer.join(timeout=5)
        assert not timer.is_alive()  # cancelled, not left to run for hours
        assert len(killed) == 1  # and the engine run it was timing is ended
    finally:  # a regression must fail here, not hang this test process at its exit
        for timer in started:
            timer.cancel()
