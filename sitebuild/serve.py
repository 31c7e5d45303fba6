"""The live preview: MkDocs' own live-reload server over the rendered pages.

Contract: ``serve(root, options, progress, host, port, render_command)`` renders the pages
(``sitebuild.build.render``), builds them with MkDocs into ``BUILD/preview`` and serves that
folder with MkDocs' ``LiveReloadServer`` until interrupted, then removes it. After each edit:
a page or asset under ``docs/`` is rendered again in this process (that page alone), anything
else (engine, drawing or build code, mkdocs.yml, a --trace file) runs ``render_command``, a
fresh process, so edited code is what runs; then MkDocs rebuilds with ``dirty=True`` (only the
pages whose rendered Markdown changed). A failed rebuild prints its one-line error and keeps
serving what was there. The preview runs no gates and publishes nothing: ``build`` does.
"""

from __future__ import annotations

import errno
import logging
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from sitebuild import build, build_folder
from sitebuild.errors import BuildError
from sitebuild.generator import mkdocs_build
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
    watched = (*(root / name for name in WATCHED), *options.traces)
    changes = Changes(watched)
    preview = options.build_dir / "preview"
    with build_folder.exclusive(options.build_dir):  # builds sharing the folder take turns
        inputs = build.engine_and_traces(root, options, progress)
        context = build.page_context(root, inputs, build.pages(root, options, inputs, progress))
        shutil.rmtree(preview, ignore_errors=True)
        with progress.phase("mkdocs") as notes:
            mkdocs_build(root, options.build_dir / "pages", preview, options.site_url)
            notes.append(f"into {shown(preview)}")
    fresh = [False]  # whether code changed since this process rendered: then always a process

    def rebuild() -> None:
        start, changed = time.perf_counter(), changes.poll()
        docs = (root / "docs").as_posix() + "/"
        fresh[0] = fresh[0] or any(not path.startswith(docs) for path in changed)
        try:
            # A fresh process takes the build folder's lock itself.
            if fresh[0] and subprocess.run(render_command, cwd=root).returncode != 0:
                raise _Failed
            with build_folder.exclusive(options.build_dir):
                if not fresh[0]:
                    only = {Path(path).relative_to(root).as_posix() for path in changed}
                    render_pages(root, context, options.build_dir / "pages", only)
                mkdocs_build(root, options.build_dir / "pages", preview, options.site_url,
                             dirty=True)
        except _Failed:
            print("[serve] rebuild failed; still serving the previous preview", flush=True)
            return
        except LocatedError as err:
            print(" ".join(str(err).split()), file=sys.stderr, flush=True)
            print("[serve] rebuild failed; still serving the previous preview", flush=True)
            return
        print(f"[serve] rebuilt in {time.perf_counter() - start:.2f}s", flush=True)

    _log_to_terminal()
    server = LiveReloadServer(builder=rebuild, host=host, port=port, root=str(preview),
                              polling_interval=POLL_SECONDS)
    server.error_handler = lambda code: _error_page(preview, code)
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
        shutil.rmtree(preview, ignore_errors=True)
    return 0


class _Failed(Exception):
    """The render process failed (it printed its own one-line error)."""


def _error_page(site: Path, code: int) -> bytes | None:
    """The site's own page for a missing address (Material's 404.html), as a host would."""
    page = site / "404.html"
    return page.read_bytes() if code == 404 and page.is_file() else None


def _log_to_terminal() -> None:
    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[serve] %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

