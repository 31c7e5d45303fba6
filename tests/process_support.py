"""Processes seen through Linux's /proc: what a process started, its command line, whether
it is still running. For the tests of killed builds and of processes that die with their parent."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still its children (Linux's /proc)."""
    tasks = Path(f"/proc/{pid}/task")
    found = []
    for task in tasks.iterdir() if tasks.is_dir() else ():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:  # the task ended meanwhile
            continue
    return found


def command(pid: int) -> bytes:
    """The command line of ``pid`` (empty once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
