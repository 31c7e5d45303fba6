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

from engine import record_checks, records
from engine.errors import EngineError


def record_command(args: argparse.Namespace) -> None:
    ids = args.trace_ids or None
    if args.status:
        for state in records.status(ids):
            print(f"{state.trace_id} fresh" if state.fresh
                  else f"{state.trace_id} stale {state.reason}", flush=True)
        return
    if args.check:
        _check(ids)
        return
    if args.verify:
        _fail_on(records.verify([s.trace_id for s in records.status(ids)], sys.stderr))
        print("record: every record named reproduced byte for byte", flush=True)
        return
    if args.verify_changed:
        _verify_changed(args.base, args.budget)
        return
    _refuse_off_reference()
    todo = [s.trace_id for s in records.status(ids) if args.all or not s.fresh]
    if not todo:
        print("record: every record is fresh (--all recomputes them)", flush=True)
        return
    start = time.perf_counter()
    written = records.record(todo, sys.stderr)
    print(f"record: wrote {', '.join(f'records/{n}' for n in written)} and their grids' cells "
          f"in {time.perf_counter() - start:.1f} s", flush=True)


def _check(ids: list[str] | None) -> None:
    stale = [s for s in records.status(ids) if not s.fresh]
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
    _check(None)
    _refuse_off_reference()
    base = base or record_checks.default_base()
    traces, cells = record_checks.changed(base)
    print(f"record: since {base[:12]}: {len(traces)} trace record(s) and {len(cells)} cell "
          "record(s) changed", file=sys.stderr, flush=True)
    problems = records.verify(traces, sys.stderr) if traces else []
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
    print(f"record: {len(traces)} changed trace(s) recomputed, {len(cells)} changed cell(s) "
          f"and {done} of {len(sample)} other cells rerun: all match their records",
          flush=True)


def _fail_on(problems: list[str]) -> None:
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        for problem in problems[1:]:
            print(problem, file=sys.stderr)
        raise EngineError(problems[0] + more)
