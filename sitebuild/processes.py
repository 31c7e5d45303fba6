"""Child processes that never outlive the build: engine runs, MkDocs and Zensical, serve's
renders.

Contract: ``child_command(module, args)`` runs ``python -m MODULE ARGS`` through this module,
which first has the kernel kill it when the build dies (Linux's ``PR_SET_PDEATHSIG``,
``die_with``), then execs the module unchanged.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

#: prctl's option that has the kernel signal this process when its parent dies.
PR_SET_PDEATHSIG = 1
# The standard library has no call for this request and no maintained package wraps it alone.
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with(parent: int) -> None:
    """Be killed (SIGKILL) when the parent dies; exit now if ``parent`` (a pid) is gone."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it died before the request
            os._exit(1)


def child_command(module: str, args: Sequence[str]) -> list[str]:
    """The command that runs ``python -m module *args``, killed when this process dies. (Not
    ``subprocess``'s ``preexec_fn``: it runs Python between fork and exec, unsafe beside
    threads, and runs at-fork hooks where Python drops a SIGTERM's exception.)"""
    return [sys.executable, "-m", __name__, str(os.getpid()), module, *args]


def main(argv: list[str]) -> NoReturn:
    """``PID MODULE ARGS...``: die with PID, then become ``python -m MODULE ARGS``."""
    parent, module, *args = argv
    die_with(int(parent))
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
