"""The live preview: the rendered pages, kept rendered as the sources change, built by MkDocs
and served with live reload.

Contract: ``serve(...)`` renders the pages, has MkDocs build them (``mkdocs build``, not
strict, in a child process) into a scratch folder and serves that folder on the reader's port
(``preview_server``, the only server: no other port answers) until stopped, polling the
sources meanwhile. An edit under ``docs/`` renders the pages it touched in this process; any
other edit runs ``render_command`` (a fresh process, so edited code is what runs) for it and
every later one. Each rendered edit is built again into a new folder, which then replaces the
one served, and every open page reloads. A failed render prints its one-line error once, and
shows it atop every page served (the last good render otherwise) until an edit renders. The
server typesets each page's math as it serves it, as the build does. No gates, nothing
published; the scratch folders are removed when serve stops.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from sitebuild import build, build_folder, preview_server
from sitebuild.engine_runs import ENGINE_SECONDS
from sitebuild.errors import last_line
from sitebuild.generator import mkdocs_build
from sitebuild.page_context import PageContext, fenced
from sitebuild.preview_server import PreviewServer
from sitebuild.processes import run_limited
from sitebuild.progress import Progress
from sitebuild.render import render_pages, split_front_matter
from sitebuild.typeset_math import typeset_page
from tracefile.errors import LocatedError
from tracefile.files import write_atomic

WATCHED = ("docs", "notebooks", "engine", "tracefile", "diagrams", "sitebuild", "mkdocs.yml",
           "build_site.py")
#: How often the sources are polled (one poll of every watched file takes about a millisecond).
POLL_SECONDS = 0.1


class Changes:
    """Which watched files changed since the last poll (by their mtime and size), told once
    they have stood still for a poll: an editor or a script may save a file in several
    writes (truncate, then write), and a rebuild between them would read half a file."""

    def __init__(self, watched: tuple[Path, ...]) -> None:
        self.watched = watched
        self.last = self.snapshot()

    def snapshot(self) -> dict[str, tuple[int, int]]:
        state = {}
        for top in self.watched:
            for path in top.rglob("*") if top.is_dir() else [top]:
                if path.is_file() and "__pycache__" not in path.parts:
                    info = path.stat()
                    state[path.as_posix()] = (info.st_mtime_ns, info.st_size)
        return state

    def poll(self) -> set[str]:
        changed = self.since_last()
        while changed:
            time.sleep(POLL_SECONDS)
            more = self.since_last()
            if not more:
                break
            changed |= more
        return changed

    def since_last(self) -> set[str]:
        now, before = self.snapshot(), self.last
        self.last = now
        return {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}


def serve(root: Path, options: build.Options, progress: Progress, host: str, port: int,
          render_command: list[str]) -> int:
    """Render and serve with live reload (see the module doc); the exit code."""
    typeset: dict = {}  # each formula is rendered once, however often its pages are served
    server = preview_server.listen(  # before the build: a taken port fails at once
        host, port, rewrite_html=lambda page: typeset_page(root, page, typeset))
    address = f"http://{host}:{server.server_address[1]}/"
    watched = (*(root / name for name in WATCHED), *options.traces,
               *((options.report,) if options.report else ()))
    changes = Changes(watched)  # before the first render: an edit during it is seen
    with server, tempfile.TemporaryDirectory(prefix="residual-preview-") as sites:
        with build_folder.exclusive(options.build_dir):  # builds sharing the folder take turns
            inputs = build.engine_and_traces(root, options, progress)
            context = build.pages(root, options, inputs, progress)
        preview = Preview(root, options, context, render_command, changes)
        preview.generate(server, Path(sites), address)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"[serve] previewing on {address} : saved edits show there in seconds. "
              "Nothing is checked or published (`python build_site.py build` does both)",
              flush=True)
        try:
            while True:
                if preview.rebuild():
                    preview.generate(server, Path(sites), address)
                time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            print("[serve] stopped", flush=True)
            return 0
        finally:
            server.shutdown()


class Preview:
    """The rendered pages MkDocs serves, brought up to date with the sources' edits."""

    def __init__(self, root: Path, options: build.Options, context: PageContext,
                 render_command: list[str], changes: Changes) -> None:
        self.root, self.options, self.context = root, options, context
        self.render_command, self.changes = render_command, changes
        self.pages = options.build_dir / "pages"
        self.pending: set[str] = set()  # changed files not yet in a successful render
        self.fresh = False  # code changed since this process rendered: a process renders
        self.failed = False  # the last rebuild failed: wait for another edit
        self.banner = ""  # the failure shown atop every page
        self.built: list[Path] = []  # the sites MkDocs built that are kept, the last served
        self.generated = 0  # how many builds MkDocs was asked for

    def rebuild(self) -> bool:
        """Render what the pending changes touch; on failure say why in one line, in the log
        and atop every page served, and keep the pages and the pending changes until the
        next edit. Whether the rendered pages changed (and the site is to be built again)."""
        start = time.perf_counter()
        new = self.changes.poll()
        self.pending |= new
        if not new and (self.failed or not self.pending):
            return False  # nothing new (a failed edit waits for the next one)
        docs = (self.root / "docs").as_posix() + "/"
        code = any(not path.startswith(docs) for path in self.pending)
        self.fresh = self.fresh or code
        try:
            # A fresh process takes the build folder's lock itself.
            # No bytecode written: a new .pyc under a watched folder would wake the server.
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
            if self.fresh:
                done = run_limited(self.render_command, ENGINE_SECONDS, "serve", cwd=self.root,
                                   env=env, stderr=subprocess.PIPE, encoding="utf-8",
                                   errors="replace")
                sys.stderr.write(done.stderr)
                if done.returncode:
                    raise _Failed(last_line(done.stderr))
            with build_folder.exclusive(self.options.build_dir):
                self.show_failure(None)
                if not self.fresh:
                    only = {Path(path).relative_to(self.root).as_posix() for path in self.pending}
                    render_pages(self.root, self.context, self.pages, only)
        except (_Failed, LocatedError) as err:
            line = " ".join(str(err).split())
            if isinstance(err, LocatedError):
                print(line, file=sys.stderr, flush=True)
            with build_folder.exclusive(self.options.build_dir):
                self.show_failure(line)
            self.failed = True
            print("[serve] rebuild failed; still serving the previous preview (the error is "
                  "shown atop every page until an edit builds)", flush=True)
            return True
        self.pending.clear()
        self.failed = False
        print(f"[serve] rendered in {time.perf_counter() - start:.2f}s", flush=True)
        return True

    def generate(self, server: PreviewServer, sites: Path, address: str) -> None:
        """Have MkDocs build the rendered pages into a new folder under ``sites`` and serve
        it. A failure is told in one line and the site served stays (the first is raised)."""
        start = time.perf_counter()
        self.generated += 1
        site = sites / str(self.generated)
        try:
            with build_folder.exclusive(self.options.build_dir):
                warnings = mkdocs_build(self.root, self.pages, site, address, strict=False)
        except LocatedError as err:
            if not self.built:
                raise
            shutil.rmtree(site, ignore_errors=True)
            print(" ".join(str(err).split()), file=sys.stderr, flush=True)
            print("[serve] MkDocs could not build the preview; still serving the previous "
                  "one", flush=True)
            return
        for warning in warnings:
            print(f"mkdocs: {warning}", file=sys.stderr, flush=True)
        server.show(site)
        self.built.append(site)
        if len(self.built) > 2:  # the one before last: no request can still be reading it
            shutil.rmtree(self.built.pop(0), ignore_errors=True)
        print(f"[serve] MkDocs built the preview in {time.perf_counter() - start:.2f}s; "
              "open pages reload", flush=True)

    def show_failure(self, error: str | None) -> None:
        """Put ``error`` atop every rendered page, after its front matter (None: take the
        last one away)."""
        banner = "" if error is None else (
            '!!! failure "This preview is out of date: the last edit did not build"\n'
            + "".join(f"    {row}\n" for row in fenced(error, "text").strip("\n").split("\n"))
            + "\n")
        for page in sorted(self.pages.rglob("*.md")):
            text = page.read_text(encoding="utf-8")
            _, _, offset = split_front_matter(text, page.name)
            rows = text.splitlines(keepends=True)
            front, body = "".join(rows[:offset]), "".join(rows[offset:])
            body = body.removeprefix(self.banner)
            if front + banner + body != text:
                write_atomic(page, (front + banner + body).encode("utf-8"))
        self.banner = banner


class _Failed(Exception):
    """The render process failed (it printed its own one-line error, which this holds)."""
