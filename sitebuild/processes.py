"""Child processes that never outlive the build: engine runs, MkDocs and Zensical, serve's
renders.

Contract: ``child_command(module, args)`` is the command that runs ``python -m MODULE ARGS``
through this module, which runs nothing if the build (its parent) is already gone, and
otherwise runs the module as ``__main__`` while a thread watches the parent: the moment it dies,
even by SIGKILL, which no ``finally`` of the build survives to act on, the child exits.
``run_limited(command, seconds, what, **options)`` is ``subprocess.run`` that ends the child
after ``seconds`` with a ``BuildError`` naming ``what``: no child of the build runs unbounded.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from sitebuild.errors import BuildError

#: How often the child looks for its parent (a killed build's children end within this).
WATCH_SECONDS = 0.05
#: The exit status of a child whose build died.
ORPHANED = 1


def child_command(module: str, args: Sequence[str]) -> list[str]:
    """The command that runs ``python -m module *args`` and ends when this process dies, in
    Python's UTF-8 mode: no child reads or writes by the locale's encoding (``LC_ALL=C``)."""
    return [sys.executable, "-X", "utf8", "-m", __name__, str(os.getpid()), module, *args]


def run_limited(command: Sequence[str], seconds: float, what: str,
                **options: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(command, **options)``, the child killed after ``seconds`` and the
    build stopped with a line saying so."""
    try:
        return subprocess.run(command, timeout=seconds, check=False, **options)
    except subprocess.TimeoutExpired:
        raise BuildError(what, f"took longer than {seconds:.0f} s and was stopped") from None


def watch(parent: int) -> None:
    """Exit at once (no cleanup: the build that would want it is dead) when ``parent`` is no
    longer this process's parent; the orphan is handed to another process, so its parent id
    changes."""
    def orphaned() -> None:
        while os.getppid() == parent:
            threading.Event().wait(WATCH_SECONDS)
        os._exit(ORPHANED)

    if os.getppid() != parent:  # it died before the child started
        os._exit(ORPHANED)
    threading.Thread(target=orphaned, name="watch-parent", daemon=True).start()


def main(argv: list[str]) -> NoReturn:
    """``PID MODULE ARGS...``: watch PID, then run ``python -m MODULE ARGS``'s code."""
    parent, module, *args = argv
    watch(int(parent))
    sys.argv = [module, *args]  # runpy puts the module's file first, as ``python -m`` does
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    sys.exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
