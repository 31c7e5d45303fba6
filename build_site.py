#!/usr/bin/env python3
"""Build, serve and check the residual-connections chapter site: the command line.

The work lives in ``sitebuild`` (``sitebuild.build`` runs the phases). One progress line per
phase on stdout; on failure one line ``FILE:LINE: what was wrong`` on stderr, exit code 1, the
previous site untouched; 2 for usage errors, 130 when stopped. ``RESIDUAL_DEBUG=1`` shows the
traceback of an unexpected internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from sitebuild import build as site_build
from sitebuild import check as site_check
from sitebuild import interrupts
from sitebuild.generator import GENERATORS
from sitebuild.processes import child_command
from sitebuild.progress import Progress
from tracefile.errors import LocatedError

ROOT = Path(__file__).resolve().parent
SERVE_HOST = "127.0.0.1"
CHECK_DESCRIPTION = """\
Run the static gates on an already built site and print every finding, one line each
(docs/PAGE.md:LINE: [gate] message (built into SITE/PAGE.html:LINE)):
  audit    every number is a traced value shown as the trace gives it; every diagram
           reads like its diagram re-rendered from the trace
  links    internal links, images and #anchors resolve; nothing is fetched from another host
  trace    the published trace and the Trace page's listing equal the checked trace (a diff
           is printed under the finding)
  rebuilt  every file of the site (pages, charts, search index, notebooks, listings, the
           PDF) equals the file the build makes from the checked traces, byte for byte
The site is rebuilt for the address its front page names (--site-url to say another) and
with its PDF edition when it has one. The browser and bad-input gates run in the test suite:
./dev test"""


def options(args: argparse.Namespace, root: Path = ROOT) -> site_build.Options:
    """The build's options from the parsed command line."""
    names = [field.name for field in dataclasses.fields(site_build.Options)]
    given = {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}
    return site_build.Options(**{"out": root / "site", **given, "traces": tuple(args.traces)})


def run(args: argparse.Namespace, progress: Progress, root: Path = ROOT) -> int:
    """Run the parsed command on the project at ``root``."""
    if args.command == "check":
        return site_check.check(root, args.site, options(args, root), progress, args.fresh)
    if args.command != "serve":
        return getattr(site_build, args.command)(root, options(args, root), progress)
    from sitebuild.serve import serve

    # Every option but --port, for the fresh process that renders after a code edit.
    valued = [("--build-dir", args.build_dir), ("--cache-dir", args.cache_dir),
              ("--report", args.report), *(("--trace", trace) for trace in args.traces)]
    render = ["render", *(part for flag, value in valued if value is not None
                          for part in (flag, str(value)))]
    render += ["--unverified-trace"] if args.unverified_trace else []
    return serve(ROOT, options(args), progress, SERVE_HOST, args.port,
                 child_command("build_site", render))


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1-65535."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number (1-65535): {text!r}")
    return int(text)


def _add(sub: Any, name: str, help: str, description: str,
         engine: bool = True) -> argparse.ArgumentParser:
    """A command's parser, with the options of every command that runs the engine."""
    command = sub.add_parser(name, help=help, description=description, formatter_class=(
        argparse.HelpFormatter if engine else argparse.RawDescriptionHelpFormatter))
    command.add_argument("--trace", type=Path, metavar="FILE", action="append", dest="traces",
                         default=[], help="build from this trace instead of running its "
                         "experiment (repeatable; each file's header says which trace it is)"
                         if engine else "trace to check against (repeatable), which must "
                         "equal the engine's run (default: the engine's run of each)")
    if engine:
        command.add_argument("--report", type=Path, metavar="FILE",
                             help="learner report to show with --trace (default: none)")
        command.add_argument("--unverified-trace", action="store_true",
                             help="publish --trace files that differ from a fresh run of the "
                             "engine, with a warning banner on every page (default: refuse)")
    command.add_argument("--build-dir", type=Path, default=ROOT / "build", metavar="DIR",
                         help="folder for the traces, generated files, rendered pages and "
                         "the content-hash cache (default: build)")
    command.add_argument("--cache-dir", type=Path, metavar="DIR",
                         help="cache of engine runs and figures, which several build folders "
                         "may share (default: BUILD-DIR/cache)")
    return command


def parser() -> argparse.ArgumentParser:
    """The command line: ``build`` (default), ``serve``, ``render`` and ``check``."""
    top = argparse.ArgumentParser(prog="build_site.py", epilog="Without a command, `build` runs.",
                                  description="Build, serve and check the chapter site.")
    sub = top.add_subparsers(dest="command", metavar="{build,serve,render,check}")
    build = _add(sub, "build", "build the site into --out (default)",
                 "Run the engine, draw the figures, render the pages into BUILD-DIR/pages, build "
                 "the site from them strictly, run the gates, then move the site into --out "
                 "atomically.")
    build.add_argument("--out", type=Path, metavar="DIR",
                       help="output folder, replaced atomically (default: site/ in the project)")
    build.add_argument("--force", action="store_true",
                       help="rebuild even when nothing changed since the last published site")
    build.add_argument("--fresh", action="store_true",
                       help="recompute every trace instead of reading its record in records/ "
                       "(training cells from the cell cache; cold, this takes minutes)")
    build.add_argument("--pdf", action="store_true",
                       help="also print the chapter and both labs as one PDF with Chromium, "
                       "linked from every page (./dev pdf; needs ./dev setup's browser)")
    serve = _add(sub, "serve", "preview with live reload (no gates, no publish)",
                 "Render the pages and serve a preview on 127.0.0.1, rebuilt whenever a page, "
                 "template, diagram or engine source changes. It publishes nothing and runs no "
                 "gates: `build` does.")
    serve.add_argument("--port", type=port_number, default=8000,
                       help="port, 1-65535 (default: 8000)")
    _add(sub, "render", "render the pages into BUILD-DIR/pages only",
         "Run the engine and draw the figures as `build` does, then render the pages into "
         "BUILD-DIR/pages: plain Markdown any site generator reading mkdocs.yml can build.")
    check = _add(sub, "check", "run the static gates on a built site",
                 CHECK_DESCRIPTION, engine=False)
    check.add_argument("--site", type=Path, default=ROOT / "site", metavar="DIR",
                       help="built site to check (default: site/ in the project)")
    check.add_argument("--fresh", action="store_true",
                       help="recompute every trace, its training cells too, instead of "
                       "reading its record or the cache (default: recorded, and said so; a "
                       "cold run takes minutes)")
    for command in (build, check):
        command.add_argument("--generator", choices=GENERATORS, default="mkdocs",
                             help="the site generator that turns the rendered pages into the "
                             "site (default: mkdocs; zensical: docs/building.md lists what "
                             "differs)")
    for command, verb, default in (
            (build, "will be served from", "none: served from /"),
            (check, "was built for", "the one its front page names, else none")):
        command.add_argument("--site-url", metavar="URL", help=f"address the site {verb} "
                             f"(default: {default})")
    return top


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    """Run one command on the project at ``root`` (this file's folder; a test may name a copy
    whose code is this one); map every failure to one line on stderr."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["build", *argv]
    args = parser().parse_args(argv)
    if getattr(args, "report", None) is not None and not args.traces:
        parser().error("--report needs --trace")
    for name in ("report", "build_dir", "cache_dir"):
        if getattr(args, name, None) is not None:
            setattr(args, name, getattr(args, name).resolve())
    for name in ("out", "site"):  # the published site is a link: its name, not its release
        if getattr(args, name, None) is not None:
            whole = Path(os.path.abspath(getattr(args, name)))
            setattr(args, name, whole.parent.resolve() / whole.name)
    args.traces = [path.resolve() for path in args.traces]
    progress = Progress(args.command)
    try:  # SIGTERM stops a build as Ctrl-C does: temporary folders go, the site stays as it was
        with interrupts.stopping_on_signals():
            return run(args, progress, root)
    except LocatedError as err:
        print(" ".join(str(err).split()), file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{progress.current}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if os.environ.get("RESIDUAL_DEBUG"):
            raise
        print(f"{progress.current}: internal error: {err.__class__.__name__}: "
              f"{' '.join(str(err).split())}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
