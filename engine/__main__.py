"""Command line: ``python -m engine report``, ``python -m engine traces``,
``python -m engine trace [TRACE-ID] [-o FILE]``, ``python -m engine run TRACE-ID EXPERIMENT...``
and ``python -m engine record`` (`engine.record_command`).

Contract: `report` prints the learner report; `traces` lists the trace ids the engine writes,
one per line; `trace` runs one experiment (default: the chapter's) and prints its trace, or
with ``-o FILE`` writes it atomically (a temporary file in the same directory, then
`os.replace`), so a reader never sees a half-written trace; ``-o`` replaces only a
regular file (never a link, FIFO, device or folder). `run` prints the records of the
experiments named, the lines of the trace they write (``TraceSchema.experiments`` names
them), from the trace's record in ``records/`` when it is fresh, else (or with ``--fresh``)
from a run. Every user error is one line on stderr (``engine: error: ...``) and exit
status 2; a result that cannot be written (disk full, read-only, no permission, standard
output included) is one such line and exit status 1. Never a traceback. Every command
first pins the numerics (`engine.numerics.pin`),
so nothing imported at this module's top may load numpy, and has every process it starts
keep its freed memory (`engine.allocator`), which changes speed, never results.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from engine.allocator import keep_freed_memory
from engine.errors import EngineError
from engine.numerics import pin
from engine.trace import CHAPTER_TRACE
from tracefile.files import write_atomic
from tracefile.schemas import SCHEMAS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage first; one line is easier to read in a build log.
        self.exit(2, f"engine: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m engine",
        description="Run the residual-connections chapter's experiments: their traces, their "
                    "records in records/ and the learner report.",
        epilog="Every command first pins the numerics: OpenBLAS's Haswell kernels on one "
        "thread and numpy's loops up to X86_V3 on an x86-64 CPU with AVX2 (whatever "
        "OPENBLAS_CORETYPE or NPY_*_CPU_FEATURES say), so traces have the same bytes on every "
        "such machine with the same libraries; a lab's NUMERICS record says which ran. "
        "ENGINE_NUMERICS=native leaves the kernels to the machine and the environment.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    report = commands.add_parser(
        "report",
        help="print the learner report (key=value lines)",
        description="Print the deterministic learner report of every Chapter 24 fact.",
    )
    report.add_argument("-o", "--output", metavar="FILE", type=Path,
                        help="write the report to FILE atomically instead of printing it")
    commands.add_parser(
        "traces", help="list the trace ids the engine writes",
        description="List the trace ids the engine writes, one per line.",
    )
    trace = commands.add_parser(
        "trace",
        help=f"run one experiment and write its trace (default {CHAPTER_TRACE})",
        description="Run one experiment and write the trace the site is built from "
        "(grammar: docs/trace.md).",
    )
    trace.add_argument("trace_id", nargs="?", default=CHAPTER_TRACE, metavar="TRACE-ID",
                       help=f"which trace (see `traces`; default {CHAPTER_TRACE})")
    trace.add_argument(
        "-o", "--output", metavar="FILE", type=Path,
        help="write the trace to FILE atomically instead of printing it",
    )
    trace.add_argument(
        "--report", metavar="FILE", type=Path,
        help=f"also write the learner report of the same run to FILE ({CHAPTER_TRACE} only)",
    )
    rerun = commands.add_parser(
        "run", help="run a trace's experiments and print the records of the ones named",
        description="Run the experiments of one trace (trained cells come from their cache) "
        "and print the records of the experiments named: the lines of the trace they write.")
    rerun.add_argument("trace_id", metavar="TRACE-ID", help="which trace (see `traces`)")
    rerun.add_argument("names", nargs="+", metavar="EXPERIMENT",
                       help="which experiments, as the lab names them (`ten-layers`)")
    rerun.add_argument("--fresh", action="store_true",
                       help="recompute the trace (its cells from the cell cache) instead of "
                       "reading its record in records/")
    _add_record_parser(commands)
    return parser


def _add_record_parser(commands: Any) -> None:  # argparse's subparsers object
    record = commands.add_parser(
        "record", help="recompute the stale records in records/ (or check or verify them)",
        description="Recompute every trace whose record in records/ is stale (its key, the "
        "hash of its code and numerics, changed) and write its record and its grids' cell "
        "records; the trained cells come from ENGINE_CELL_CACHE (default build/cache/cells). "
        "Then execute every lab notebook whose record is stale (its source, the code it runs "
        "or its lab's trace changed) and write it, outputs and all, to records/notebooks/.")
    record.add_argument("trace_ids", nargs="*", metavar="RECORD",
                        help="only these records: trace ids, or notebooks as "
                        "notebooks/LAB.ipynb (default: every one)")
    mode = record.add_mutually_exclusive_group()
    mode.add_argument("--all", action="store_true", help="recompute fresh records too")
    mode.add_argument("--status", action="store_true",
                      help="print each record's state (TRACE-ID fresh|stale REASON); exit 0")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 naming each stale record and the command that remakes it")
    mode.add_argument("--verify", action="store_true",
                      help="recompute the records from nothing (no cell cache) and exit 1 at "
                      "the first line any differs")
    mode.add_argument("--verify-changed", action="store_true",
                      help="what CI runs: --verify for every record changed since --base, and "
                      "a rerun of a sample of the other cells, drawn from HEAD's hash, within "
                      "--budget seconds")
    record.add_argument("--base", metavar="REV",
                        help="with --verify-changed: the commit before the ones under test "
                        "(default $CI_BASE, else the parent of the oldest commit within "
                        "three hours of HEAD: a session's commits)")
    record.add_argument("--budget", type=float, default=120.0, metavar="SECONDS",
                        help="with --verify-changed: seconds for the sampled cells (default 120)")


def _records(trace_id: str, names: list[str], fresh: bool) -> str:
    """The record lines of experiments ``names`` of trace ``trace_id``: from its record in
    records/ when that is fresh (and not ``fresh``), else from a run."""
    from engine import records
    from engine.trace import experiment
    from tracefile.writer import record_lines

    run = experiment(trace_id)  # an unknown trace says which there are
    known = SCHEMAS[trace_id].experiments
    if unknown := [name for name in names if name not in known]:
        raise EngineError(f"run: trace {trace_id} has no experiment {unknown[0]!r}; it has "
                          f"{', '.join(known)}")
    if not fresh and records.status([trace_id])[0].fresh:
        text = (records.RECORDS / SCHEMAS[trace_id].file_name).read_text(encoding="utf-8")
        kinds = [{spec.kind for spec in known[name]} for name in names]
        return "".join(f"{line}\n" for wanted in kinds for line in text.splitlines()
                       if line.split(" ", 1)[0] in wanted)
    if not fresh:
        print(f"engine: records/{SCHEMAS[trace_id].file_name} is stale; computing "
              f"{trace_id} (./dev record writes it)", file=sys.stderr, flush=True)
    from engine.experiments.grid import CACHE_VARIABLE

    os.environ.setdefault(CACHE_VARIABLE, str(records.DEFAULT_CELL_CACHE))  # as `record` does
    results = run()
    return "".join(f"{line}\n" for name in names for spec in known[name]
                   for line in record_lines(spec, results))


def _run(args: argparse.Namespace) -> None:
    if args.command == "traces":
        sys.stdout.write("".join(f"{trace_id}\n" for trace_id in SCHEMAS))
        return
    if args.command == "run":
        _emit(_records(args.trace_id, args.names, args.fresh), None, "records")
        return
    if args.command == "record":
        from engine.record_command import record_command

        record_command(args)
        return
    if args.command == "report":
        from engine.report import render_report

        _emit(render_report(), args.output, "report")
        return
    from engine.trace import CHAPTER_TRACE, experiment, trace_text

    if args.report is not None and args.trace_id != CHAPTER_TRACE:
        raise EngineError(f"--report goes with {CHAPTER_TRACE}, whose learner report it is")
    results = experiment(args.trace_id)()
    _emit(trace_text(args.trace_id, results), args.output, "trace")
    if args.report is not None:
        from engine.report import render_report

        # One run, two renderings: the report can never describe another run than the trace.
        _emit(render_report(results), args.report, "report")


class WriteError(Exception):
    """The result could not be written (disk full, read-only, no permission): exit status 1."""


def _emit(text: str, output: Path | None, what: str) -> None:
    if output is None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise WriteError(f"cannot write the {what} to standard output: "
                             f"{error.strerror or error}") from None
        return
    try:
        # Replace a regular file only: never a link, a FIFO, a device or a folder.
        if output.is_symlink() or (output.exists() and not stat.S_ISREG(output.stat().st_mode)):
            raise WriteError(f"refusing to replace {output}: not a regular file")
        write_atomic(output, text)
    except OSError as error:
        raise WriteError(f"cannot write the {what} to {output}: "
                         f"{error.strerror or error}") from None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        pin()
        keep_freed_memory()
        _run(args)
    except EngineError as error:
        print(f"engine: error: {error}", file=sys.stderr)
        return 2
    except WriteError as error:
        print(f"engine: error: {error}", file=sys.stderr)
        _silence_stdout()
        return 1
    except BrokenPipeError:
        # The reader (e.g. `| head`) left early; silence the flush at interpreter exit.
        _silence_stdout()
        return 1
    return 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush cannot fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
