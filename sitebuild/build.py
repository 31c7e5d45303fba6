"""The build: engine → traces → generated files → rendered pages → site generator → gates →
publish; ``render`` stops after the pages (in ``BUILD/pages``); ``sitebuild.check`` reuses
the phases to rebuild a site it checks.

Contract: a ``--trace`` file must equal the engine's run of it (an error at its first differing
line) unless ``unverified_trace``, which publishes it with a banner on every page. Failures
raise a ``LocatedError``, and the previous site is left as it was.
"""

from __future__ import annotations

import collections
import itertools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from sitebuild import build_folder, cache, gates, generated, pdf, publish
from sitebuild.cache import Cache
from sitebuild.citations import project_references
from sitebuild.engine_runs import off_reference_note, run_engine
from sitebuild.errors import BuildError
from sitebuild.generator import generate_site
from sitebuild.page_context import PageContext
from sitebuild.paths import CHAPTER_TRACE, REPORT_NAME, served_path, shown
from sitebuild.progress import Progress
from sitebuild.render import render_pages
from tracefile import SCHEMAS, TraceSet, load_trace
from tracefile.errors import shorten
from tracefile.files import write_atomic


@dataclass(frozen=True)
class Options:
    """What a build is asked for (the command line's options)."""

    out: Path
    build_dir: Path
    cache_dir: Path | None = None
    traces: tuple[Path, ...] = ()
    report: Path | None = None
    unverified_trace: bool = False
    site_url: str | None = None
    force: bool = False
    generator: str = "mkdocs"
    pdf: bool = False  # also print the PDF edition (``sitebuild.pdf``), linked from every page
    fresh: bool = False  # recompute every trace rather than read its record (check --fresh)

    @property
    def cache(self) -> Cache:
        return Cache(self.cache_dir or self.build_dir / "cache")


@dataclass(frozen=True)
class Inputs:
    """What the pages are rendered from: the parsed traces, the report, the ids of --trace
    files that differ from the engine's run, and the generated files' key."""

    traces: TraceSet
    report: bytes | None
    unverified: tuple[str, ...]
    generated_key: str
    cached: tuple[str, ...] = ()  # the traces read from their records or the cache, not run


def build(root: Path, options: Options, progress: Progress) -> int:
    """The build command (see the module doc)."""
    out, build_dir = options.out, options.build_dir
    publish.check_replaceable(out)
    if build_dir == out or out in build_dir.parents:
        raise BuildError(shown(build_dir), f"the build folder is inside the output folder "
                         f"{shown(out)}, which every build replaces; choose another --build-dir")
    os.environ["SOURCE_DATE_EPOCH"] = build_folder.source_date_epoch(root)
    with build_folder.exclusive(build_dir):
        build_folder.remove_leftovers(out.parent, options.cache.root)  # from killed builds
        inputs = engine_and_traces(root, options, progress)
        key = cache.site_key(root, inputs.traces, inputs.report, inputs.generated_key,
                             repr((options.site_url, options.generator, inputs.unverified,
                                   options.pdf)))
        if not options.force and cache.is_up_to_date(build_dir, out, key):
            progress.total(f"up to date: {shown(out)} was built from these inputs "
                           "(--force rebuilds)")
            return 0
        site_phases(root, options, pages(root, options, inputs, progress), progress)
        cache.record(build_dir, out, key)
    # MkDocs writes the 404 page's links from the site's address (mkdocs#1598): without one,
    # they start at the host's root, and the 404 page is unstyled under a sub-path.
    where = "" if options.site_url else " for the root of a host (--site-url URL for a sub-path)"
    progress.total(f"published {shown(out)}{where}")
    return 0


def check_folders(options: Options) -> None:
    """The build and cache folders are folders (or not yet there), checked before any run."""
    for flag, folder in (("--build-dir", options.build_dir), ("--cache-dir", options.cache_dir)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise BuildError(shown(folder), f"{flag} names a file, not a folder")


def render(root: Path, options: Options, progress: Progress) -> int:
    """Everything before the site generator: the rendered pages in ``BUILD/pages``."""
    with build_folder.exclusive(options.build_dir):
        pages(root, options, engine_and_traces(root, options, progress), progress)
    progress.total(f"rendered the pages into {shown(options.build_dir / 'pages')}")
    return 0


#: Why a --trace file must equal the engine's run, for build (check has its own).
PUBLISH_PURPOSE = ("refusing to publish a trace the engine does not reproduce "
                   "(--unverified-trace publishes it with a warning on every page)")


def engine_and_traces(root: Path, options: Options, progress: Progress,
                      purpose: str = PUBLISH_PURPOSE) -> Inputs:
    """The engine's runs (cached), each --trace held against them (``same_as_engine``, for
    ``purpose``), and the parsed traces."""
    trace_dir = options.build_dir / "trace"
    given, fresh, differ, cached = engine_files(root, options, progress, purpose)
    for trace_id in given:
        progress.detail(f"--trace {trace_id}: " + ("differs from the engine's run (published "
                        "with a banner)" if trace_id in differ else "equals the engine's run"))
    paths = {trace_id: given.get(trace_id, trace_dir / schema.file_name)
             for trace_id, schema in SCHEMAS.items()}
    # With the chapter's trace from --trace, the report is the one given (or none): the
    # engine's would describe another run.
    report = options.report if CHAPTER_TRACE in given else trace_dir / REPORT_NAME
    with progress.phase("parse") as notes:
        publish.write_folder(trace_dir, fresh, listed=True)
        traces = TraceSet({trace_id: load_trace(path, SCHEMAS[trace_id])
                           for trace_id, path in paths.items()}, CHAPTER_TRACE)
        text = read_report(report)
        notes.append(f"{len(traces.traces)} trace(s)" + ("" if text else ", no report"))
        key = generated.generated_key(root, traces)  # in a phase: a missing `dot` names it
    if note := off_reference_note(traces):
        progress.detail(note)
    return Inputs(traces, text, differ, key, cached)


def engine_files(root: Path, options: Options, progress: Progress, purpose: str
                 ) -> tuple[dict[str, Path], dict[str, bytes], tuple[str, ...], tuple[str, ...]]:
    """The --trace files by trace id, the engine's runs (cached) by file name, the ids of
    the --trace files that differ from them (``same_as_engine``, for ``purpose``), and the
    names of the runs taken from the cache."""
    with progress.phase("engine") as notes:
        check_folders(options)
        given = given_traces(options.traces)  # inside the phase: a bad file names it on stdout
        results = run_engine(root, options.cache, options.build_dir, lambda todo, why:
                             progress.detail("computing " + ", ".join(
                                 f"{j.name} (record stale: {why[j.name]})" for j in todo)
                                 + "; ./dev record writes the records …"),
                             progress.detail, recorded=not options.fresh)
        fresh = {name: data for result in results for name, data in result.files.items()}
        counts = collections.Counter(r.status for r in results)
        notes.append(f"{len(results)} trace(s): " + ", ".join(
            f"{counts[status]} {status}" for status in ("recorded", "cached", "ran")
            if counts[status]))
        differ = tuple(trace_id for trace_id, path in given.items() if not same_as_engine(
            path, fresh[SCHEMAS[trace_id].file_name], options.unverified_trace, purpose))
    for result in results:
        took = f"{result.seconds:.2f}s" if result.status == "ran" else result.status
        progress.detail(f"{result.job.name:<28} {took}")
    return given, fresh, differ, tuple(r.job.name for r in results if r.status != "ran")


def pages(root: Path, options: Options, inputs: Inputs, progress: Progress) -> PageContext:
    """The generated files (drawn or cached) and the rendered pages; what they were rendered
    with."""
    with progress.phase("generate") as notes:
        status, files = generated.generate(inputs.traces, options.build_dir / "generated",
                                           options.cache, inputs.generated_key)
        notes.append(f"{len(files)} file(s) in {shown(options.build_dir / 'generated')} "
                     f"(cache {status})")
    with progress.phase("render") as notes:
        report = None if inputs.report is None else inputs.report.decode("utf-8", "replace")
        context = PageContext(inputs.traces, report, files, project_references(root), root,
                              inputs.unverified, pdf.EDITION if options.pdf else None)
        written = render_pages(root, context, options.build_dir / "pages")
        notes.append(f"{len(written)} file(s) changed in {shown(options.build_dir / 'pages')}")
    return context


def site_files(root: Path, options: Options, context: PageContext, into: Path,
               progress: Progress) -> None:
    """The site generator's site from the rendered pages into ``into``, with the PDF edition
    when asked for."""
    with progress.phase(options.generator) as notes:
        generate_site(root, options.build_dir / "pages", into, options.site_url,
                      options.generator)
        notes.append(f"--strict into {shown(into)}")
    if options.pdf:
        with progress.phase("pdf") as notes:
            edition = pdf.print_edition(into, options.site_url)
            notes.append(f"{edition.name}, {edition.stat().st_size // 1024} KB")


def site_phases(root: Path, options: Options, context: PageContext, progress: Progress) -> None:
    """The site generator into a temporary folder, the gates on it, then the atomic publish."""
    tmp = publish.temp_site_dir(options.out, options.build_dir)
    try:
        site_files(root, options, context, tmp, progress)
        with progress.phase("gates") as notes:
            findings = gates.run_gates(tmp, context.traces, context.references,
                                       drawn_svgs(context), base=served_path(options.site_url),
                                       shown_as=shown(options.out), docs_dir=root / "docs")
            if findings:
                listed = options.build_dir / "findings.txt"
                write_atomic(listed, "".join(f"{finding}\n" for finding in findings))
                more = f" (and {len(findings) - 1} more, all listed in {listed})"
                raise GatesFailed("gates", f"{findings[0]}{more if len(findings) > 1 else ''}")
            notes.append("no findings")
        with progress.phase("publish") as notes:
            publish.publish(tmp, options.out)
            notes.append(shown(options.out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def drawn_svgs(context: PageContext) -> dict[str, str]:
    """The SVG drawings the pages were rendered with, by name (the figures gate's ``rendered``)."""
    return {name.removesuffix(".svg"): data.decode("utf-8")
            for name, data in context.files.items() if name.endswith(".svg")}


def same_as_engine(path: Path, fresh: bytes, allowed: bool, purpose: str) -> bool:
    """Whether a --trace file equals the engine's fresh trace; a difference is an error naming
    its first line and ``purpose`` (why it matters), unless ``allowed`` (--unverified-trace)."""
    difference = first_difference(path.read_bytes(), fresh)
    if difference is None:
        return True
    if allowed:
        return False
    line, written = difference
    raise BuildError(str(path), f"differs from a fresh run of the engine, which writes "
                     f"{written} here; {purpose}", line)


def first_difference(mine: bytes, theirs: bytes) -> tuple[int, str] | None:
    """The first line (1-based) where ``mine`` differs from the engine's ``theirs``, and what
    the engine writes there; None when they are equal."""
    if mine == theirs:
        return None
    pairs = itertools.zip_longest(mine.split(b"\n"), theirs.split(b"\n"))
    line, (_, want) = next((n, pair) for n, pair in enumerate(pairs, 1) if pair[0] != pair[1])
    return line, ("(nothing: its trace ends earlier)" if want is None
                  else repr(shorten(want.decode("utf-8", "replace"))))


def given_traces(files: tuple[Path, ...]) -> dict[str, Path]:
    """The traces named by --trace, by the id their header declares."""
    given: dict[str, Path] = {}
    for path in files:
        trace = load_trace(path)
        if trace.trace_id in given:
            raise BuildError(str(path), f"--trace names {trace.trace_id} twice (also "
                             f"{given[trace.trace_id]})", 1)
        given[trace.trace_id] = path
    return given


def read_report(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as err:
        raise BuildError(str(path), f"cannot read the learner report: "
                         f"{err.strerror or err}") from None


class GatesFailed(BuildError):
    """The gates found defects: said as the first finding's own line (it names its file)."""

    def __str__(self) -> str:
        return self.message
