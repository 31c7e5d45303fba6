"""The live preview: ``mkdocs serve`` over the rendered pages, which this process keeps
rendered.

Contract: ``serve(...)`` renders the pages and runs MkDocs' own preview server on them (a
child process that dies with this one, on a private port behind ``preview_proxy`` on the
reader's) until stopped, polling the sources meanwhile. An edit
under ``docs/`` renders the pages it touched in this process; any other edit runs
``render_command`` (a fresh process, so edited code is what runs) for it and every later one,
and then marks every page changed (a listing's source may have changed while no page did).
MkDocs rebuilds the whole site on each change it sees: its ``--dirty`` builds go by file
times, and miss a page rendered while a build is under way. A failed render prints its
one-line error once, and shows it atop every page served (the last good render otherwise)
until an edit renders. The proxy typesets each page's math as it serves it, as the build does.
No gates, nothing published.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from sitebuild import build, build_folder, preview_proxy
from sitebuild.engine_runs import ENGINE_SECONDS
from sitebuild.errors import last_line
from sitebuild.generator import mkdocs_settings
from sitebuild.page_context import PageContext, fenced
from sitebuild.processes import child_command, run_limited
from sitebuild.progress import Progress
from sitebuild.render import render_pages, split_front_matter
from sitebuild.typeset_math import typeset_page
from tracefile.errors import LocatedError
from tracefile.files import write_atomic

WATCHED = ("docs", "notebooks", "engine", "tracefile", "diagrams", "sitebuild", "mkdocs.yml",
           "build_site.py")
#: How often the sources are polled (one poll of every watched file takes about a millisecond;
#: MkDocs then notices the rendered page within its own half-second poll).
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
    proxy = preview_proxy.listen(  # before the build
        host, port, preview_proxy.free_port(host),
        rewrite_html=lambda page: typeset_page(root, page, typeset))
    watched = (*(root / name for name in WATCHED), *options.traces,
               *((options.report,) if options.report else ()))
    changes = Changes(watched)  # before the first render: an edit during it is seen
    try:
        with build_folder.exclusive(options.build_dir):  # builds sharing the folder take turns
            inputs = build.engine_and_traces(root, options, progress)
            context = build.pages(root, options, inputs, progress)
        preview = Preview(root, options, context, render_command, changes)
        settings = mkdocs_settings(root, preview.pages, options.site_url)
        server = subprocess.Popen(
            child_command("mkdocs", ["serve", "--no-strict", "--dev-addr",
                                     f"{host}:{proxy.upstream}", "--config-file", str(settings)]),
            # Its own session: a signal to this one's group is this process's to pass on.
            cwd=root, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, start_new_session=True,
            stderr=subprocess.PIPE, encoding="utf-8", errors="replace", bufsize=1)
    except BaseException:
        proxy.server_close()
        raise
    # MkDocs' log names its private address: the reader is shown the proxy's.
    log = threading.Thread(target=copy_log, daemon=True, args=(
        server.stderr, f"http://{host}:{proxy.upstream}/", f"http://{host}:{port}/"))
    log.start()
    wait_until_listening(proxy.upstream, server)  # until then, requests wait in the queue
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    print(f"[serve] a preview, without gates: `build_site.py build` publishes; "
          f"serving on http://{host}:{port}/", flush=True)
    try:
        while server.poll() is None:
            preview.rebuild()
            time.sleep(POLL_SECONDS)
        print(f"serve: `mkdocs serve` exited with {server.returncode}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("[serve] stopped", flush=True)
        return 0
    finally:
        proxy.shutdown()
        proxy.server_close()
        stop(server)
        log.join(timeout=5)  # MkDocs' last lines


def wait_until_listening(port: int, server: subprocess.Popen[str]) -> None:
    """Return once MkDocs' server accepts a connection on ``port`` (or has exited)."""
    while server.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(POLL_SECONDS)


def copy_log(lines: IO[str], private: str, public: str) -> None:
    """Copy MkDocs' log to this process's stderr, naming the address the reader uses."""
    for line in lines:
        sys.stderr.write(line.replace(private, public))
        sys.stderr.flush()


def stop(server: subprocess.Popen[str]) -> None:
    """End the server as Ctrl-C would (it removes its own temporary site), or kill it."""
    if server.poll() is None:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:  # SIGINT ignored, as in a background job
            server.kill()
            server.wait()


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

    def rebuild(self) -> None:
        """Render what the pending changes touch; on failure say why in one line, in the log
        and atop every page served, and keep the pages and the pending changes until the
        next edit."""
        start = time.perf_counter()
        new = self.changes.poll()
        self.pending |= new
        if not new and (self.failed or not self.pending):
            return  # nothing new (a failed edit waits for the next one)
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
                if code:
                    # A listing's source or the settings may have changed while no page's
                    # Markdown did: the pages are marked changed, so MkDocs builds again.
                    mkdocs_settings(self.root, self.pages, self.options.site_url)
                    for page in self.pages.rglob("*.md"):
                        os.utime(page)
        except (_Failed, LocatedError) as err:
            line = " ".join(str(err).split())
            if isinstance(err, LocatedError):
                print(line, file=sys.stderr, flush=True)
            with build_folder.exclusive(self.options.build_dir):
                self.show_failure(line)
            self.failed = True
            print("[serve] rebuild failed; still serving the previous preview (the error is "
                  "shown atop every page until an edit builds)", flush=True)
            return
        self.pending.clear()
        self.failed = False
        print(f"[serve] rendered in {time.perf_counter() - start:.2f}s; MkDocs rebuilds",
              flush=True)

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
