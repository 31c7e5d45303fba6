#!/usr/bin/env python3
"""Build, serve and check the residual-connections chapter site: the command line.

  build (default)  engine → traces → figures → rendered pages → site generator → gates → publish
  serve            render the pages and serve a live-reloading preview on 127.0.0.1
  render           everything before the site generator: the pages in BUILD-DIR/pages
  check            run the gates on an already built site

The work lives in ``sitebuild`` (``sitebuild.build`` orchestrates it). One progress line per
phase on stdout; on failure one line ``FILE:LINE: what was wrong`` on stderr, exit code 1, the
previous site untouched; 2 for usage errors, 130 when stopped. ``RESIDUAL_DEBUG=1`` shows the
traceback of an unexpected internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from sitebuild import build as site_build
from sitebuild import interrupts
from sitebuild.generator import GENERATORS
from sitebuild.processes import child_command
from sitebuild.progress import Progress
from tracefile.errors import LocatedError

ROOT = Path(__file__).resolve().parent
BUILD = ROOT / "build"
SERVE_HOST = "127.0.0.1"


def options(args: argparse.Namespace) -> site_build.Options:
    """The build's options from the parsed command line."""
    return site_build.Options(
        out=getattr(args, "out", ROOT / "site"), build_dir=args.build_dir,
        cache_dir=args.cache_dir, traces=tuple(args.trace or ()),
        report=getattr(args, "report", None),
        unverified_trace=getattr(args, "unverified_trace", False), site_url=args.site_url,
        force=getattr(args, "force", False), generator=getattr(args, "generator", "mkdocs"))


def cmd_build(args: argparse.Namespace, progress: Progress) -> int:
    return site_build.build(ROOT, options(args), progress)


def cmd_render(args: argparse.Namespace, progress: Progress) -> int:
    args.site_url = None  # the pages do not depend on it
    return site_build.render(ROOT, options(args), progress)


def cmd_serve(args: argparse.Namespace, progress: Progress) -> int:
    from sitebuild.serve import serve

    args.site_url = f"http://{SERVE_HOST}:{args.port}/"
    render_args = ["render", "--build-dir", str(args.build_dir)]
    for trace in args.trace or ():
        render_args += ["--trace", str(trace)]
    if args.report is not None:
        render_args += ["--report", str(args.report)]
    if args.unverified_trace:
        render_args.append("--unverified-trace")
    if args.cache_dir is not None:
        render_args += ["--cache-dir", str(args.cache_dir)]
    return serve(ROOT, options(args), progress, SERVE_HOST, args.port,
                 child_command("build_site", render_args))


def cmd_check(args: argparse.Namespace, progress: Progress) -> int:
    return site_build.check(ROOT, args.site, options(args), progress)


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1-65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (1-65535)")
    return port


CHECK_DESCRIPTION = """\
Run the static gates on an already built site and print every finding, one line each
(docs/PAGE.md:LINE: [gate] message (built into SITE/PAGE.html:LINE)):
  audit  every number in the article is a traced value shown as the trace gives it,
         and every diagram reads like its diagram re-rendered from the trace
  links  internal links, images and #anchors resolve; nothing is fetched from another host
  trace  the published trace and the Trace page's raw listing equal the checked trace
         byte for byte (a unified diff is printed under the finding)
The browser gate (math, diagrams, palette, search, console, requests, axe-core in Chromium)
and the reproducible-build and bad-input gates run in the test suite: ./dev test"""


def _add_trace_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", type=Path, metavar="FILE", action="append",
                        help="build from this trace instead of running its experiment "
                        "(repeatable; each file's header says which trace it is)")
    parser.add_argument("--report", type=Path, metavar="FILE",
                        help="learner report to show with --trace (default: none)")
    parser.add_argument("--unverified-trace", action="store_true",
                        help="publish --trace files that differ from a fresh run of the "
                        "engine, with a warning banner on every page (default: refuse)")
    parser.add_argument("--build-dir", type=Path, default=BUILD, metavar="DIR",
                        help="folder for the trace, generated files and the content-hash "
                        "cache (default: build)")
    _add_cache_option(parser)


def _add_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, metavar="DIR",
                        help="content-hash cache of engine runs and figures, which several "
                        "build folders may share (default: BUILD-DIR/cache)")


def _build_parser(sub: Any) -> None:
    build = sub.add_parser("build", help="build the site into --out (default)",
                           description="Run the engine, draw the diagrams and tables, render "
                           "the pages into BUILD-DIR/pages, build the site from them strictly, "
                           "run the gates, then move the site into --out atomically.")
    _add_trace_options(build)
    build.add_argument("--out", type=Path, default=ROOT / "site", metavar="DIR",
                       help="output folder, replaced atomically (default: site/ in the project)")
    build.add_argument("--generator", choices=GENERATORS, default="mkdocs",
                       help="the site generator that turns the rendered pages into the site "
                       "(default: mkdocs; zensical: docs/building.md lists what differs)")
    build.add_argument("--site-url", metavar="URL",
                       help="address the site will be served from (default: none: no "
                       "canonical links, and instant navigation falls back to page loads)")
    build.add_argument("--force", action="store_true",
                       help="rebuild even when nothing changed since the last published site")
    build.set_defaults(func=cmd_build)


def _serve_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="preview with live reload (no gates, no publish)",
                           description="Render the pages and serve a preview on 127.0.0.1 "
                           "that is rebuilt whenever a page, template, diagram or engine source "
                           "changes. It publishes nothing and runs no gates: `build` does.")
    _add_trace_options(serve)
    serve.add_argument("--port", type=port_number, default=8000,
                       help="port, 1-65535 (default: 8000)")
    serve.set_defaults(func=cmd_serve)


def _render_parser(sub: Any) -> None:
    render = sub.add_parser("render", help="render the pages into BUILD-DIR/pages only",
                            description="Run the engine and draw the figures as `build` does, "
                            "then render the pages into BUILD-DIR/pages, plain Markdown any "
                            "site generator reading mkdocs.yml can build; nothing is published.")
    _add_trace_options(render)
    render.set_defaults(func=cmd_render)


def _check_parser(sub: Any) -> None:
    check = sub.add_parser("check", help="run the static gates on a built site",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           description=CHECK_DESCRIPTION)
    check.add_argument("--site", type=Path, default=ROOT / "site", metavar="DIR",
                       help="built site to check (default: site/ in the project)")
    check.add_argument("--trace", type=Path, metavar="FILE", action="append",
                       help="trace to check against (repeatable), which must equal the "
                       "engine's run (default for each trace: the engine's run, from the "
                       "cache when its sources are unchanged)")
    check.add_argument("--build-dir", type=Path, default=BUILD, metavar="DIR",
                       help="build folder whose cache holds the engine's runs (default: build)")
    _add_cache_option(check)
    check.add_argument("--site-url", metavar="URL",
                       help="address the site was built for (default: none, served from /)")
    check.set_defaults(func=cmd_check)


def parser() -> argparse.ArgumentParser:
    """The command line: ``build`` (default), ``serve``, ``render`` and ``check``."""
    top = argparse.ArgumentParser(
        prog="build_site.py", description="Build, serve and check the chapter site.",
        epilog="Without a command, `build` runs.")
    sub = top.add_subparsers(dest="command", metavar="{build,serve,render,check}")
    for add in (_build_parser, _serve_parser, _render_parser, _check_parser):
        add(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one command; map every failure to one line on stderr."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["build", *argv]
    args = parser().parse_args(argv)
    if getattr(args, "report", None) is not None and args.trace is None:
        parser().error("--report needs --trace")
    for name in ("report", "out", "site", "build_dir", "cache_dir"):
        if getattr(args, name, None) is not None:
            setattr(args, name, getattr(args, name).resolve())
    if getattr(args, "trace", None):
        args.trace = [path.resolve() for path in args.trace]
    progress = Progress(args.command)
    # SIGTERM (a service manager, `kill`) stops a build the way Ctrl-C does: every temporary
    # folder is removed on the way out and the published site is left as it was.
    try:
        with interrupts.stopping_on_signals():
            return args.func(args, progress)
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
