#!/usr/bin/env python3
"""Build, serve and check the residual-connections chapter site.

Role: the project's main command. It only orchestrates and reports; each phase lives
in ``diagrams/`` (``pipeline``: engine, diagrams/tables, gates; ``sitebuild``: MkDocs
and the atomic publish; ``serve``: the live-reloading preview).

  build (default)  engine → trace → diagrams/tables → mkdocs --strict → gates → publish
  serve            build, then serve on http://127.0.0.1:8000 and rebuild on every edit
  check            run the gates on an already built site

Contract: one progress line per phase with its duration on stdout (``PHASE FAILED``
for the phase that failed); on failure exactly one line ``FILE:LINE: what was wrong``
(or ``PHASE: message``) on stderr, exit code 1, and the previous output folder
untouched; exit code 2 for usage errors.
Set ``RESIDUAL_DEBUG=1`` to see the traceback of an unexpected internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sitebuild import freshness, interrupts, mkdocs_run, pipeline, publish
from sitebuild.cache import Cache
from sitebuild.errors import BuildError
from sitebuild.paths import CHAPTER_TRACE, REPORT_NAME, BuildSettings
from sitebuild.publish import write_folder
from tracefile import SCHEMAS, TraceSet, load_trace, parse_trace
from tracefile.errors import LocatedError, shorten
from tracefile.files import write_atomic

if TYPE_CHECKING:  # imported by serve alone: it brings Jinja
    from sitebuild.warm import Warm

ROOT = Path(__file__).resolve().parent
BUILD = ROOT / "build"
SERVE_HOST = "127.0.0.1"


class Progress:
    """Prints ``[command] phase  1.23s  notes`` lines and remembers the current phase."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.current = command
        self.start = time.perf_counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[list[str]]:
        """Time one phase; the caller appends notes to the yielded list.

        A phase that raises still gets its line (``FAILED``), so stdout names the phase
        while stderr keeps the one-line error. No phase starts once SIGTERM or Ctrl-C has
        arrived, even one whose interrupt Python dropped (``sitebuild.interrupts``), so none
        publishes: publishing is the last phase.
        """
        self.current, notes, start = name, [], time.perf_counter()
        interrupts.check()  # "publish: interrupted": the phase that did not start
        try:
            yield notes
        except BaseException as err:
            took = time.perf_counter() - start
            print(f"[{self.command}] {name:<9} FAILED {took:5.2f}s", flush=True)
            if isinstance(err, OSError):
                # A folder that cannot be written (read-only, full, no permission): name it
                # and the phase, rather than an internal error.
                raise BuildError(str(err.filename or name),
                                 f"{name}: {err.strerror or err}") from None
            raise
        took = time.perf_counter() - start
        print(f"[{self.command}] {name:<9} {took:6.2f}s  {' '.join(notes)}".rstrip(), flush=True)

    def detail(self, note: str) -> None:
        """An indented line under the current phase (one experiment, one file)."""
        print(f"[{self.command}]   {note}", flush=True)

    def total(self, note: str) -> None:
        took = time.perf_counter() - self.start
        print(f"[{self.command}] {'total':<9} {took:6.2f}s  {note}", flush=True)


@dataclass(frozen=True)
class BuildInputs:
    """The trace files by id, the learner report (None: not supplied) and the ids of traces
    given by --trace that differ from the engine's run (published only with a banner)."""

    traces: dict[str, Path]
    report: Path | None
    unverified: tuple[str, ...] = ()


def cache_dir(args: argparse.Namespace) -> Path:
    return args.cache_dir or args.build_dir / "cache"


def shown(path: Path) -> str:
    """``path`` relative to the project when inside it (shorter progress lines)."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def engine_phase(args: argparse.Namespace, cache: Cache, progress: Progress) -> BuildInputs:
    """Run (or take from the cache) every engine job, and hold each --trace file against the
    engine's own run of that trace: a difference stops the build unless --unverified-trace."""
    trace_dir = args.build_dir / "trace"
    with progress.phase("engine") as notes:
        given = given_traces(args.trace)  # inside the phase: a bad file names it on stdout
        results = pipeline.run_engine(ROOT, cache, None, args.build_dir,
                                      lambda todo: progress.detail(
                                          f"running {', '.join(job.name for job in todo)} …"))
        write_folder(trace_dir, {name: data for r in results for name, data in r.files.items()})
        ran = [r for r in results if r.status == "ran"]
        notes.append(f"{len(results)} job(s), {len(ran)} run, {len(results) - len(ran)} cached")
        differ = unverified(args, given)
    for result in results:
        took = f"{result.seconds:.2f}s" if result.status == "ran" else "cached"
        progress.detail(f"{result.job.name:<28} {took}")
    for trace_id in given:
        progress.detail(f"--trace {trace_id}: " + ("differs from the engine's run (published "
                        "with a banner)" if trace_id in differ else "equals the engine's run"))
    return dataclasses.replace(inputs_on_disk(args, given), unverified=differ)


def unverified(args: argparse.Namespace, given: dict[str, Path]) -> tuple[str, ...]:
    """The ids of the --trace files that differ from the engine's run in the build folder
    (an error naming the first differing line, unless --unverified-trace)."""
    trace_dir = args.build_dir / "trace"
    return tuple(trace_id for trace_id, path in given.items()
                 if not same_as_engine(path, (trace_dir / SCHEMAS[trace_id].file_name).read_bytes(),
                                       args.unverified_trace, PUBLISH_PURPOSE))


def first_difference(mine: bytes, theirs: bytes) -> tuple[int, str] | None:
    """The first line (1-based) where ``mine`` differs from the engine's ``theirs``, and what
    the engine writes there; None when they are equal."""
    if mine == theirs:
        return None
    pairs = itertools.zip_longest(mine.split(b"\n"), theirs.split(b"\n"))
    line, (_, want) = next((n, pair) for n, pair in enumerate(pairs, 1) if pair[0] != pair[1])
    return line, ("(nothing: its trace ends earlier)" if want is None
                  else repr(shorten(want.decode("utf-8", "replace"))))


#: Why a --trace file must equal the engine's run, for build and for check.
PUBLISH_PURPOSE = ("refusing to publish a trace the engine does not reproduce "
                   "(--unverified-trace publishes it with a warning on every page)")
CHECK_PURPOSE = "check compares sites with what the engine computes"


def same_as_engine(path: Path, fresh: bytes, allowed: bool, purpose: str) -> bool:
    """Whether a --trace file equals the engine's fresh trace; a difference is an error naming
    its first line and ``purpose`` (why it matters), unless ``allowed`` (--unverified-trace)."""
    difference = first_difference(path.read_bytes(), fresh)
    if difference is None:
        return True
    if allowed:
        return False
    line, want = difference
    raise BuildError(str(path), f"differs from a fresh run of the engine, which writes {want} "
                     f"here; {purpose}", line)


def given_traces(files: list[Path] | None) -> dict[str, Path]:
    """The traces named by --trace, by the id their header declares."""
    given: dict[str, Path] = {}
    for path in files or ():
        trace = load_trace(path)
        if trace.trace_id in given:
            raise BuildError(str(path), f"--trace names {trace.trace_id} twice (also "
                             f"{given[trace.trace_id]})", 1)
        given[trace.trace_id] = path
    return given


def cmd_build(args: argparse.Namespace, progress: Progress) -> int:
    """The build command: every phase, then an atomic move into ``--out``."""
    out: Path = args.out
    publish.check_replaceable(out)
    if args.build_dir == out or out in args.build_dir.parents:
        raise BuildError(shown(args.build_dir), f"the build folder is inside the output folder "
                         f"{shown(out)}, which every build replaces; choose another --build-dir")
    os.environ["SOURCE_DATE_EPOCH"] = pipeline.source_date_epoch(ROOT)
    with pipeline.exclusive(args.build_dir):
        return _build_locked(args, progress, out)


def _build_locked(args: argparse.Namespace, progress: Progress, out: Path) -> int:
    """The build phases, run while holding the lock on the build folder."""
    build = args.build_dir
    pipeline.remove_leftovers(cache_dir(args), out.parent)  # what killed builds left there
    cache = Cache(cache_dir(args))
    inputs = engine_phase(args, cache, progress)
    with progress.phase("parse") as notes:
        traces = TraceSet({trace_id: load_trace(path, SCHEMAS[trace_id])
                           for trace_id, path in inputs.traces.items()}, CHAPTER_TRACE)
        report = _read_report(inputs.report)
        notes.append(f"{len(traces.traces)} trace(s)" + ("" if report else ", no report"))
        # Inside a phase: a failure here (Graphviz missing) still names the phase on stdout.
        generated_key = pipeline.generated_key(ROOT, traces)
        key = freshness.site_key(ROOT, traces, report, generated_key, args.site_url,
                                 inputs.unverified)
    if note := pipeline.off_reference_note(traces):
        progress.detail(note)
    if not args.force and freshness.is_up_to_date(build, out, key):
        progress.total(f"up to date: {shown(out)} was built from these inputs "
                       "(--force rebuilds)")
        return 0
    with ExitStack() as drawing:
        with progress.phase("generate") as notes:
            generation = drawing.enter_context(pipeline.generating(
                ROOT, traces, build / "generated", cache, generated_key))
            if generation.drawing is not None and generation.drawing.charts:
                notes.append(f"{generation.drawing.charts} chart(s) drawing beside MkDocs,")
            notes += [shown(build / "generated"), f"(cache {generation.status})"]
        settings = BuildSettings(traces=dict(inputs.traces),
                                 report=inputs.report if report else None,
                                 generated=build / "generated", unverified=inputs.unverified,
                                 parsed=traces, drawing=generation.drawing)
        _site_phases(args, progress, out, traces, settings,
                     lambda: _finish_charts(progress, generation, build / "generated"))
    freshness.record(build, out, key)
    progress.total(f"published {shown(out)}")
    return 0


def _read_report(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as err:
        raise BuildError(str(path), f"cannot read the learner report: "
                         f"{err.strerror or err}") from None


def _site_phases(args: argparse.Namespace, progress: Progress, out: Path, traces: TraceSet,
                 settings: BuildSettings, figures: Callable[[], dict[str, bytes]],
                 warm: Warm | None = None) -> None:
    """MkDocs into a temporary folder, the gates on it, then the atomic publish. ``figures``
    gives the generated files once MkDocs is done (waiting for charts still being drawn, in
    a phase of its own); the figure check compares the pages with them. ``warm``: the
    serving process's memos (``sitebuild.warm``), which only an in-process rebuild has."""
    tmp = publish.temp_site_dir(out, args.build_dir)
    try:
        with progress.phase("mkdocs") as notes:
            mkdocs_run.mkdocs_build(ROOT, tmp, settings, args.site_url, warm)
            notes.append(f"--strict into {shown(tmp)}")
            if warm is not None:
                notes.append(f"({warm.hits} of {warm.hits + warm.misses} page renders reused)")
        generated = figures()
        with progress.phase("gates") as notes:
            # Name pages as they will be published, not by the temporary folder.
            memo = warm.gates if warm is not None else None
            findings = [f.shown_as(shown(out))
                        for f in pipeline.run_gates(tmp, traces, generated, args.site_url, memo)]
            if findings:
                report = args.build_dir / "findings.txt"
                write_atomic(report, "".join(f"{finding}\n" for finding in findings))
                raise pipeline.GatesFailed(findings, report)
            notes.append("no findings")
        with progress.phase("publish") as notes:
            publish.publish(tmp, out)
            notes.append(shown(out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _finish_charts(progress: Progress, generation: pipeline.Generation,
                   target: Path) -> dict[str, bytes]:
    """The generated files, once the charts drawn beside MkDocs are all done (a phase of its
    own only when some were being drawn), stored in the cache and ``target``."""
    if generation.drawing is None or not generation.drawing.charts:  # nothing drawn beside
        return generation.finish()
    with progress.phase("charts") as notes:
        drawn, unfinished = generation.drawing.charts, generation.drawing.unfinished()
        files = generation.finish()
        notes.append(f"{drawn} chart(s) drawn beside MkDocs, {unfinished} still drawing when "
                     f"it finished; stored in {shown(target)}")
    return files


def cmd_serve(args: argparse.Namespace, progress: Progress) -> int:
    """The serve command: build, then serve with live reload."""
    from sitebuild.serve import serve
    from sitebuild.warm import Warm

    # Material's instant navigation follows only sitemap links with this very port.
    build_args = ["--out", str(args.out), "--build-dir", str(args.build_dir),
                  "--site-url", f"http://{SERVE_HOST}:{args.port}/"]
    for trace in args.trace or ():
        build_args += ["--trace", str(trace)]
    if args.report is not None:
        build_args += ["--report", str(args.report)]
    if args.unverified_trace:
        build_args.append("--unverified-trace")
    if args.cache_dir is not None:
        build_args += ["--cache-dir", str(args.cache_dir)]
    watch = tuple(p for p in (*(args.trace or ()), args.report) if p is not None)
    args.site_url = f"http://{SERVE_HOST}:{args.port}/"
    warm = Warm()
    return serve(ROOT, args.out, build_args, SERVE_HOST, args.port, watch,
                 lambda: docs_rebuild(args, warm), lambda: prime(args, warm))


@dataclass(frozen=True)
class DocsInputs:
    """What an in-process rebuild takes from the last build: its traces, report and figures."""

    traces: TraceSet
    report: bytes | None
    settings: BuildSettings
    generated_key: str
    generated: dict[str, bytes]


def docs_inputs(args: argparse.Namespace, warm: Warm | None) -> DocsInputs:
    """The last build's traces, report and figures, as ``docs_rebuild`` and ``prime`` use
    them (the caller holds the build folder's lock)."""
    given = given_traces(args.trace)
    # The banner of an unverified trace must survive an in-process rebuild.
    inputs = dataclasses.replace(inputs_on_disk(args, given), unverified=unverified(args, given))
    load = warm.trace if warm is not None else load_trace  # serve parses a changed trace only
    traces = TraceSet({trace_id: load(path, SCHEMAS[trace_id])
                       for trace_id, path in inputs.traces.items()}, CHAPTER_TRACE)
    report = _read_report(inputs.report)
    settings = BuildSettings(traces=dict(inputs.traces), report=inputs.report if report else None,
                             generated=args.build_dir / "generated",
                             unverified=inputs.unverified, parsed=traces,
                             page_memo=warm.renders if warm is not None else None)
    generated_key = pipeline.generated_key(ROOT, traces)
    # The last build's figures, if drawn from these traces, spare the figure gate drawing
    # them all again (most of an in-process rebuild's time otherwise). A build that failed
    # in MkDocs may have stopped before storing the figures it drew: the pages must not show
    # an older build's, so they are brought up to date (from the cache, or drawn).
    generated = pipeline.generated_on_disk(settings.generated, generated_key)
    if generated is None:
        generated = pipeline.generate(ROOT, traces, settings.generated, Cache(cache_dir(args)),
                                      generated_key)[1]
    return DocsInputs(traces, report, settings, generated_key, generated)


def docs_rebuild(args: argparse.Namespace, warm: Warm | None = None) -> bool:
    """Rebuild after an edit under ``docs/`` only, in this process: the traces, report and
    generated figures of the last build are reused, so only MkDocs, the gates and the publish
    run, and with ``warm`` (``sitebuild.warm``) only for the pages whose inputs changed since
    an earlier build in this process. False (after printing the one-line error) when it
    failed."""
    progress = Progress("rebuild")
    try:
        with warm.lock if warm is not None else nullcontext(), \
                pipeline.exclusive(args.build_dir):
            if warm is not None:
                warm.hits = warm.misses = 0
            last = docs_inputs(args, warm)
            _site_phases(args, progress, args.out, last.traces, last.settings,
                         lambda: last.generated, warm)
            key = freshness.site_key(ROOT, last.traces, last.report, last.generated_key,
                                     args.site_url, last.settings.unverified)
            freshness.record(args.build_dir, args.out, key)
    except LocatedError as err:
        print(" ".join(str(err).split()), file=sys.stderr, flush=True)
        return False
    progress.total(f"published {shown(args.out)} (docs only, in process)")
    return True


def prime(args: argparse.Namespace, warm: Warm) -> None:
    """Fill serve's memos with the current pages, so that its first page edit is as quick as
    the next: MkDocs and the gates into a temporary folder, which is then removed; nothing is
    published. A failure is said in one line and left for the first rebuild to report."""
    start = time.perf_counter()
    try:
        with warm.lock, pipeline.exclusive(args.build_dir):
            last = docs_inputs(args, warm)
            tmp = publish.temp_site_dir(args.out, args.build_dir)
            try:
                mkdocs_run.mkdocs_build(ROOT, tmp, last.settings, args.site_url, warm)
                pipeline.run_gates(tmp, last.traces, last.generated, args.site_url, warm.gates)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except Exception as err:  # the first rebuild meets the same failure and reports it
        print(f"[serve] pages not remembered ({' '.join(str(err).split())}); the first page "
              "edit renders every page", flush=True)
        return
    print(f"[serve] pages remembered in {time.perf_counter() - start:.2f}s: a page edit now "
          "renders and checks that page alone", flush=True)


def inputs_on_disk(args: argparse.Namespace, given: dict[str, Path] | None = None) -> BuildInputs:
    """The traces and report a build uses: those of --trace, the engine's for the rest.

    With the chapter's trace from --trace, the report is the one given (or none): the engine's
    would describe another run.
    """
    given = given_traces(args.trace) if given is None else given
    trace_dir = args.build_dir / "trace"
    paths = {trace_id: given.get(trace_id, trace_dir / schema.file_name)
             for trace_id, schema in SCHEMAS.items()}
    return BuildInputs(paths, args.report if CHAPTER_TRACE in given else trace_dir / REPORT_NAME)


def cmd_check(args: argparse.Namespace, progress: Progress) -> int:
    """The check command: run the static gates on a built site and list the findings.

    The truth is always a run of the engine (fresh, or from the cache keyed by everything the
    engine runs): each ``--trace`` must equal it, and the gates compare the site, its
    published traces included, against it byte for byte.
    """
    site: Path = args.site
    if not (site / "index.html").is_file():
        raise BuildError(shown(site), "no built site here (no index.html); "
                                  "run `python build_site.py build` first")
    given = given_traces(args.trace)
    with progress.phase("engine") as notes:
        results = pipeline.run_engine(ROOT, Cache(cache_dir(args)), None,
                                      args.build_dir)
        fresh = {name: data for r in results for name, data in r.files.items()}
        ran = sum(r.status == "ran" for r in results)
        notes.append(f"{len(results)} job(s), {ran} run, {len(results) - ran} cached")
    with progress.phase("parse") as notes:
        loaded = {}
        for trace_id, schema in SCHEMAS.items():
            loaded[trace_id] = parse_trace(fresh[schema.file_name],
                                           f"<engine run of {trace_id}>", schema)
            if trace_id in given:
                same_as_engine(given[trace_id], fresh[schema.file_name], False, CHECK_PURPOSE)
        notes.append(f"{len(loaded)} trace(s) from the engine")
        traces = TraceSet(loaded, CHAPTER_TRACE)
    if note := pipeline.off_reference_note(traces):
        progress.detail(note)
    with progress.phase("gates") as notes:
        findings = [f.shown_as(shown(site))
                    for f in pipeline.run_gates(site, traces, site_url=args.site_url)]
        notes.append(f"{len(findings)} finding(s)" if findings else "no findings")
    for finding in findings:
        print(str(finding))
        for line in finding.detail.splitlines():  # a diff, indented under its finding
            print(f"    {line}")
    return 1 if findings else 0


def _add_trace_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", type=Path, metavar="FILE", action="append",
                        help="build from this trace instead of running its experiment "
                        "(repeatable; each file's header says which trace it is)")
    parser.add_argument("--report", type=Path, metavar="FILE",
                        help="learner report to show with --trace (default: none)")
    parser.add_argument("--unverified-trace", action="store_true",
                        help="publish --trace files that differ from a fresh run of the "
                        "engine, with a warning banner on every page (default: refuse)")
    parser.add_argument("--out", type=Path, default=ROOT / "site", metavar="DIR",
                        help="output folder, replaced atomically (default: site/ in the project)")
    parser.add_argument("--build-dir", type=Path, default=BUILD, metavar="DIR",
                        help="folder for the trace, generated files and the content-hash "
                        "cache (default: build)")
    _add_cache_option(parser)


def _add_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, metavar="DIR",
                        help="content-hash cache of engine runs and figures, which several "
                        "build folders may share (default: BUILD-DIR/cache)")


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


def _build_parser(sub: argparse._SubParsersAction) -> None:
    build = sub.add_parser("build", help="build the site into --out (default)",
                           description="Run the engine, render diagrams and tables, build "
                           "the pages with mkdocs --strict, run the gates, then move the "
                           "site into --out atomically.")
    _add_trace_options(build)
    build.add_argument("--site-url", metavar="URL",
                       help="address the site will be served from (default: none: no "
                       "canonical links, and instant navigation falls back to page loads)")
    build.add_argument("--force", action="store_true",
                       help="rebuild even when nothing changed since the last published site")
    build.set_defaults(func=cmd_build)


def _serve_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="build, then serve with live reload",
                           description="Build, then serve --out on 127.0.0.1 and rebuild "
                           "whenever a page, template, diagram or engine source changes.")
    _add_trace_options(serve)
    serve.add_argument("--port", type=port_number, default=8000,
                       help="port, 1-65535 (default: 8000)")
    serve.set_defaults(func=cmd_serve)


def _check_parser(sub: argparse._SubParsersAction) -> None:
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
    """The command line: ``build`` (default), ``serve`` and ``check``."""
    top = argparse.ArgumentParser(
        prog="build_site.py", description="Build, serve and check the chapter site.",
        epilog="Without a command, `build` runs.")
    sub = top.add_subparsers(dest="command", metavar="{build,serve,check}")
    for add in (_build_parser, _serve_parser, _check_parser):
        add(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one command; map every failure to one line on stderr."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["build", *argv]
    args = parser().parse_args(argv)
    if args.command in ("build", "serve") and args.report is not None and args.trace is None:
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
