"""Command line: ``python -m engine report`` and ``python -m engine trace [-o FILE]``.

Contract: `report` prints the learner report; `trace` prints the trace, or with ``-o FILE``
writes it atomically (a temporary file in the same directory, then `os.replace`), so a
reader never sees a half-written trace. Every user error is one line on stderr
(``engine: error: ...``) and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from engine.errors import EngineError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage first; one line is easier to read in a build log.
        self.exit(2, f"engine: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m engine",
        description="Run the Chapter 24 residual-connection fixtures.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands.add_parser(
        "report",
        help="print the learner report (key=value lines)",
        description="Print the deterministic learner report of every Chapter 24 fact.",
    )
    trace = commands.add_parser(
        "trace",
        help="write the residual-connections-v1 trace",
        description="Write the trace the site is built from (grammar: docs/trace.md).",
    )
    trace.add_argument(
        "-o", "--output", metavar="FILE", type=Path,
        help="write the trace to FILE atomically instead of printing it",
    )
    return parser


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (no partial file is ever visible)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp's 0600 would surprise readers
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _run(args: argparse.Namespace) -> None:
    if args.command == "report":
        from engine.report import render_report

        sys.stdout.write(render_report())
        return
    from engine.trace import render_trace

    text = render_trace()
    if args.output is None:
        sys.stdout.write(text)
        return
    try:
        write_atomically(args.output, text)
    except OSError as error:
        reason = error.strerror or str(error)
        raise EngineError(f"cannot write the trace to {args.output}: {reason}") from None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _run(args)
    except EngineError as error:
        print(f"engine: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (e.g. `| head`) left early; silence the flush at interpreter exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
