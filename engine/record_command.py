"""``python -m engine record``: keep ``records/`` true (`engine.records`).

Contract: with no mode, recomputes the stale records named (default all; ``--all``: fresh
ones too) and prints what it wrote, with progress and timings on stderr. ``--status`` prints
``TRACE-ID fresh`` or ``TRACE-ID stale REASON`` lines; ``--check`` raises `EngineError`
naming the first stale record and the command that remakes it; ``--verify`` recomputes from
nothing and raises at the first differing line; ``--verify-changed`` is CI's check
(`engine.record_checks`). Off the reference numerics, writing records is refused: a record
holds the reference kernels' bytes.
"""

from __future__ import annotations

import argparse
import sys
import time

from engine import notebook_records, record_checks, records
from engine.errors import EngineError


def record_command(args: argparse.Namespace) -> None:
    ids = args.trace_ids or None
    traces, notebooks = _split(ids)
    if args.status:
        for state in _states(traces, notebooks):
            print(f"{state.trace_id} fresh" if state.fresh
                  else f"{state.trace_id} stale {state.reason}", flush=True)
        return
    if args.check:
        _check(traces, notebooks)
        return
    if args.verify:
        problems = records.verify([s.trace_id for s in records.status(traces)], sys.stderr)
        _fail_on(problems or records.verify_notebooks(_notebook_ids(notebooks), sys.stderr))
        print("record: every record named reproduced byte for byte", flush=True)
        return
    if args.verify_changed:
        _verify_changed(args.base, args.budget)
        return
    _refuse_off_reference()
    start = time.perf_counter()
    todo = [s.trace_id for s in records.status(traces) if args.all or not s.fresh]
    written = records.record(todo, sys.stderr) if todo else []
    # A notebook is held against the traces as just written, so its state is read after them.
    stale = [s.trace_id for s in records.notebook_status() if args.all or not s.fresh]
    written += records.record_notebooks([n for n in stale if n in _notebook_ids(notebooks)],
                                        sys.stderr)
    if not written:
        print("record: every record is fresh (--all recomputes them)", flush=True)
        return
    print(f"record: wrote {', '.join(f'records/{n}' for n in written)} (and the grids' cells) "
          f"in {time.perf_counter() - start:.1f} s", flush=True)


def _split(ids: list[str] | None) -> tuple[list[str] | None, list[str] | None]:
    """The trace ids and the notebooks' record names among ``ids`` (None: every one); a
    notebook that does not exist is an `EngineError` naming those that do."""
    if ids is None:
        return None, None
    notebooks = [name for name in ids if name.startswith("notebooks/")]
    records.notebook_sources(notebooks)  # each exists, or the error names those that do
    return [name for name in ids if name not in notebooks], notebooks


def _notebook_ids(notebooks: list[str] | None) -> list[str]:
    every = [notebook_records.record_name(source) for source in notebook_records.sources()]
    return every if notebooks is None else notebooks


def _states(traces: list[str] | None, notebooks: list[str] | None) -> list[records.Status]:
    wanted = _notebook_ids(notebooks)
    return records.status(traces) + [s for s in records.notebook_status() if s.trace_id in wanted]


def _check(traces: list[str] | None, notebooks: list[str] | None) -> None:
    stale = [s for s in _states(traces, notebooks) if not s.fresh]
    if stale:
        names = " ".join(s.trace_id for s in stale)
        raise EngineError("stale records: " + "; ".join(f"{s.trace_id} ({s.reason})"
                                                        for s in stale)
                          + f"; run `./dev record {names}` and commit records/")
    print("record: every record is fresh", flush=True)


def _refuse_off_reference() -> None:
    from engine.numerics import current

    if not current().reference:
        raise EngineError(f"record: this machine computes with {current()!r}, not the "
                          "reference kernels, so its records would not be the published "
                          "bytes; record on an x86-64 machine with AVX2 (docs/building.md)")


def _verify_changed(base: str | None, budget: float) -> None:
    _check(None, None)
    _refuse_off_reference()
    base = base or record_checks.default_base()
    traces, cells = record_checks.changed(base)
    print(f"record: since {base[:12]}: {len(traces)} trace record(s) and {len(cells)} cell "
          "record(s) changed", file=sys.stderr, flush=True)
    problems = records.verify(traces, sys.stderr) if traces else []
    notebooks = record_checks.changed_notebooks(base)
    problems += records.verify_notebooks(notebooks, sys.stderr) if notebooks else []
    # A recomputed trace reran its grids' cells (grid "gradient-flow …", trace "gradient-flow-vN").
    covered = {label for label in record_checks.GRIDS
               if any(t.rpartition("-v")[0] == label.split()[0] for t in traces)}
    _, found = record_checks.rerun_cells([c for c in cells if c.label not in covered],
                                         sys.stderr)
    problems += found
    sample = record_checks.sample(record_checks.head_hash(), cells)
    done, found = record_checks.rerun_cells(sample, sys.stderr, budget)
    problems += found
    _fail_on(problems)
    print(f"record: {len(traces)} changed trace(s) recomputed, {len(notebooks)} changed "
          f"notebook(s) executed, {len(cells)} changed cell(s) and {done} of {len(sample)} "
          "other cells rerun: all match their records", flush=True)


def _fail_on(problems: list[str]) -> None:
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        for problem in problems[1:]:
            print(problem, file=sys.stderr)
        raise EngineError(problems[0] + more)
