"""Live-reloading preview server for ``build_site.py serve``.

Role: serve the published site folder on 127.0.0.1 with MkDocs' livereload server and
rebuild whenever a source changes.

Contract:
- ``serve(root, out, build_args, host, port)`` runs ``build_site.py build`` once, then
  serves ``out`` and re-runs the same build (a fresh process each time, so edited
  engine, diagram and hook code is what runs) whenever anything under ``docs/``,
  ``engine/``, ``diagrams/``, ``mkdocs.yml``, ``build_site.py`` or a ``--trace`` file
  changes. What a change regenerates follows from the content-hash caches: a page
  edit only re-runs MkDocs; a template or diagram source edit re-renders the
  diagrams and tables; an engine edit re-runs the engine, then everything after it.
- ``check_port(host, port)`` runs first: a port that is taken or not ours to bind
  raises ``BuildError("serve", ...)`` before anything is built.
- A failed rebuild prints its one-line error and leaves the previous site served
  (the build is atomic); browsers reload after every successful rebuild.
- Returns the exit code: 1 when the first build fails or the port is taken.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from sitebuild.errors import BuildError

WATCHED = ("docs", "engine", "tracefile", "diagrams", "sitebuild", "mkdocs.yml", "build_site.py")


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


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the server the same way Ctrl-C does


def _log_to_terminal() -> None:
    logger = logging.getLogger("mkdocs.livereload")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[serve] %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def serve(root: Path, out: Path, build_args: list[str], host: str, port: int,
          extra_watch: tuple[Path, ...] = ()) -> int:
    """Build, then serve ``out`` with live reload until interrupted."""
    from mkdocs.livereload import LiveReloadServer

    check_port(host, port)
    if not _build(root, build_args):
        return 1

    def rebuild() -> None:
        if not _build(root, build_args):
            print("[serve] rebuild failed; still serving the previous site", flush=True)

    _log_to_terminal()
    signal.signal(signal.SIGTERM, _stop)
    server = LiveReloadServer(builder=rebuild, host=host, port=port, root=str(out))
    for name in WATCHED:
        server.watch(str(root / name))
    for path in extra_watch:
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
