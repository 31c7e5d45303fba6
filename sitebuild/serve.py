"""The live preview: MkDocs' own live-reload server over the rendered pages.

Contract: ``serve(...)`` renders the pages, builds them with MkDocs into ``BUILD/preview`` and
serves it until stopped. An edit under ``docs/`` renders the pages it touched in this process
and MkDocs rebuilds dirty; any other edit runs ``render_command`` (a fresh process, so edited
code is what runs) for it and every later one, and MkDocs rebuilds every page. A failed rebuild
prints its one-line error and keeps serving what was there. No gates, nothing published.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from sitebuild import build, build_folder
from sitebuild.errors import BuildError
from sitebuild.generator import mkdocs_build
from sitebuild.page_context import PageContext
from sitebuild.paths import shown
from sitebuild.progress import Progress
from sitebuild.render import render_pages
from tracefile.errors import LocatedError

WATCHED = ("docs", "engine", "tracefile", "diagrams", "sitebuild", "mkdocs.yml", "build_site.py")
#: How often the watched files are polled (MkDocs' default, half a second, is a third of an
#: edit's way to the browser; one poll of every watched file takes about a millisecond).
POLL_SECONDS = 0.1


class Changes:
    """Which watched files changed since the last poll (by their mtime and size)."""

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
        now, before = self.snapshot(), self.last
        self.last = now
        return {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}


def check_port(host: str, port: int) -> None:
    """Bind ``host:port`` once, as the server will, so a taken port fails before the build."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # The server sets SO_REUSEADDR too: a port in TIME_WAIT is free, a listening one not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise BuildError("serve", f"port {port} is already in use (try --port N)") \
                    from None
            raise BuildError("serve", f"cannot listen on {host}:{port}: {err.strerror}") \
                from None


def serve(root: Path, options: build.Options, progress: Progress, host: str, port: int,
          render_command: list[str]) -> int:
    """Render, build and serve with live reload (see the module doc); the exit code."""
    from mkdocs.livereload import LiveReloadServer

    check_port(host, port)
    watched = (*(root / name for name in WATCHED), *options.traces,
               *((options.report,) if options.report else ()))
    changes = Changes(watched)  # before the first render: an edit during it is seen
    with build_folder.exclusive(options.build_dir):  # builds sharing the folder take turns
        inputs = build.engine_and_traces(root, options, progress)
        context = build.page_context(root, inputs, build.pages(root, options, inputs, progress))
        preview = Preview(root, options, context, render_command, changes)
        shutil.rmtree(preview.folder, ignore_errors=True)
        with progress.phase("mkdocs") as notes:
            mkdocs_build(root, preview.pages, preview.folder, options.site_url)
            notes.append(f"into {shown(preview.folder)}")
    if changes.last != changes.snapshot():
        preview.rebuild()
    _log_to_terminal()
    server = LiveReloadServer(builder=preview.rebuild, host=host, port=port,
                              root=str(preview.folder), polling_interval=POLL_SECONDS)
    for path in watched:
        server.watch(str(path))
    print(f"[serve] a preview, without gates: `build_site.py build` publishes; "
          f"serving on http://{host}:{port}/", flush=True)
    try:
        server.serve()
    except OSError as err:
        print(f"serve: cannot listen on {host}:{port}: {err.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("[serve] stopped", flush=True)
    finally:
        server.shutdown()
        shutil.rmtree(preview.folder, ignore_errors=True)
    return 0


class Preview:
    """The served preview: the rendered pages and MkDocs' build of them in ``BUILD/preview``."""

    def __init__(self, root: Path, options: build.Options, context: PageContext,
                 render_command: list[str], changes: Changes) -> None:
        self.root, self.options, self.context = root, options, context
        self.render_command, self.changes = render_command, changes
        self.pages, self.folder = options.build_dir / "pages", options.build_dir / "preview"
        self.pending: set[str] = set()  # changed files not yet in a successful rebuild
        self.fresh = False  # code changed since this process rendered: a process renders

    def rebuild(self) -> None:
        """Bring the preview up to date with every pending change; on failure say why in one
        line and keep both the preview and the pending changes."""
        start = time.perf_counter()
        self.pending |= self.changes.poll()
        if not self.pending:  # a file no rebuild reads (bytecode, an editor's swap file)
            return
        docs = (self.root / "docs").as_posix() + "/"
        code = any(not path.startswith(docs) for path in self.pending)
        self.fresh = self.fresh or code
        try:
            # A fresh process takes the build folder's lock itself.
            # No bytecode written: a new .pyc under a watched folder would wake the server.
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
            if self.fresh and subprocess.run(self.render_command, cwd=self.root,
                                             env=env).returncode:
                raise _Failed
            with build_folder.exclusive(self.options.build_dir):
                if not self.fresh:
                    only = {Path(path).relative_to(self.root).as_posix() for path in self.pending}
                    render_pages(self.root, self.context, self.pages, only)
                # After a code edit no page's Markdown may have changed while the site did (a
                # listing's source, mkdocs.yml): then MkDocs builds every page again.
                mkdocs_build(self.root, self.pages, self.folder, self.options.site_url,
                             dirty=not code)
        except (_Failed, LocatedError) as err:
            if isinstance(err, LocatedError):
                print(" ".join(str(err).split()), file=sys.stderr, flush=True)
            print("[serve] rebuild failed; still serving the previous preview", flush=True)
            return
        self.pending.clear()
        print(f"[serve] rebuilt in {time.perf_counter() - start:.2f}s", flush=True)


class _Failed(Exception):
    """The render process failed (it printed its own one-line error)."""


def _log_to_terminal() -> None:
    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[serve] %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

