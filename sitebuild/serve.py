"""Live-reloading preview server for ``build_site.py serve``.

Role: serve the published site folder on 127.0.0.1 with MkDocs' livereload server and
rebuild whenever a source changes.

Contract:
- ``serve(root, out, build_args, host, port, extra_watch, docs_rebuild, prime)`` runs
  ``build_site.py build`` once, then serves ``out`` and rebuilds whenever anything under
  ``docs/``, ``engine/``, ``tracefile/``, ``diagrams/``, ``sitebuild/``, ``mkdocs.yml``,
  ``build_site.py`` or an extra watched file (a ``--trace``) changes.
- An edit confined to ``docs/`` is rebuilt inside this process by ``docs_rebuild`` (MkDocs,
  gates, publish: no interpreter start, no engine), as long as no code has changed since the
  server started; ``prime``, run in a thread as the server starts, readies what makes those
  rebuilds quick (``sitebuild.warm``); any other edit runs a fresh ``build_site.py build``
  process, so edited engine, drawing or build code is what runs and no stale module is ever
  used. What a fresh build regenerates follows from the content-hash caches.
- ``check_port(host, port)`` runs first: a port that is taken or not ours to bind raises
  ``BuildError("serve", ...)`` before anything is built.
- A failed rebuild prints its one-line error and leaves the previous site served (the build
  is atomic); browsers reload only after a successful rebuild. A missing address gets the
  site's own 404 page.
- Returns the exit code: 1 when the first build fails or the port is taken.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from sitebuild import interrupts
from sitebuild.errors import BuildError

WATCHED = ("docs", "engine", "tracefile", "diagrams", "sitebuild", "mkdocs.yml", "build_site.py")
#: How often the watched files are polled. MkDocs' default (half a second) was a third of an
#: edit's way to the browser once page rebuilds took about half a second; one poll of every
#: watched file takes about a millisecond (``benchmarks/README.md``).
POLL_SECONDS = 0.1


class Changes:
    """Which watched files changed: since the last poll, and whether code changed since start.

    A file's state is its (mtime, size); comparing states finds edits without reading files.
    """

    def __init__(self, root: Path, watched: tuple[Path, ...]) -> None:
        self.root, self.watched = root, watched
        self.start = self.last = self.snapshot()

    def snapshot(self) -> dict[str, tuple[int, int]]:
        state = {}
        for top in self.watched:
            paths = top.rglob("*") if top.is_dir() else [top]
            for path in paths:
                if path.is_file() and "__pycache__" not in path.parts:
                    info = path.stat()
                    state[path.as_posix()] = (info.st_mtime_ns, info.st_size)
        return state

    def poll(self) -> tuple[set[str], bool]:
        """The files changed since the last poll, and whether anything outside ``docs/``
        differs from the server's start."""
        now = self.snapshot()
        changed = _differ(self.last, now)
        self.last = now
        docs = (self.root / "docs").as_posix() + "/"
        code_changed = any(not path.startswith(docs) for path in _differ(self.start, now))
        return changed, code_changed


def _differ(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> set[str]:
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def _error_page(out: Path, code: int) -> bytes | None:
    """The site's own page for a missing address (Material's 404.html), as a host would."""
    page = out / "404.html"
    return page.read_bytes() if code == 404 and page.is_file() else None


def _build(root: Path, build_args: list[str]) -> bool:
    # No bytecode writes: a new .pyc under a watched folder would trigger another rebuild.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, str(root / "build_site.py"), "build", *build_args]
    return subprocess.run(command, cwd=root, env=env, check=False).returncode == 0


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


def _log_to_terminal() -> None:
    logger = logging.getLogger("mkdocs.livereload")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[serve] %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def serve(root: Path, out: Path, build_args: list[str], host: str, port: int,
          extra_watch: tuple[Path, ...] = (),
          docs_rebuild: Callable[[], bool] | None = None,
          prime: Callable[[], None] | None = None) -> int:
    """Build, then serve ``out`` with live reload until interrupted: Ctrl-C or SIGTERM, which
    ``build_site.py`` turns into ``KeyboardInterrupt`` (``sitebuild.interrupts``)."""
    from mkdocs.livereload import LiveReloadServer

    check_port(host, port)
    watched = (*(root / name for name in WATCHED), *extra_watch)
    changes = Changes(root, watched)
    if not _build(root, build_args):
        return 1

    def rebuild() -> None:
        interrupts.check()  # a stop that Python dropped ends the server, not a rebuild
        changed, code_changed = changes.poll()
        docs = (root / "docs").as_posix() + "/"
        in_process = (docs_rebuild is not None and changed and not code_changed
                      and all(path.startswith(docs) for path in changed))
        if not (docs_rebuild() if in_process else _build(root, build_args)):
            # Raising keeps the browsers on the previous page: livereload reloads them only
            # after a builder that returned.
            raise SystemExit("[serve] rebuild failed; still serving the previous site")

    if docs_rebuild is not None:
        # The first edit then skips the imports. (Rebuilds in this process start no worker,
        # unless they must draw the figures a failed build did not store: their gates find
        # the unchanged pages in serve's memo, sitebuild.warm.)
        from sitebuild.mkdocs_run import warm_up

        warm_up(root)
        if prime is not None:  # while the server starts; the first rebuild waits for it
            threading.Thread(target=prime, name="prime", daemon=True).start()
    _log_to_terminal()
    server = LiveReloadServer(builder=rebuild, host=host, port=port, root=str(out),
                              polling_interval=POLL_SECONDS)
    server.error_handler = lambda code: _error_page(out, code)
    for path in watched:
        server.watch(str(path))
    try:
        server.serve()
    except OSError as err:
        print(f"serve: cannot listen on {host}:{port}: {err.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("[serve] stopped", flush=True)
    finally:
        server.shutdown()
    return 0
