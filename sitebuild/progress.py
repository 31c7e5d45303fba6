"""Progress lines: ``[command] phase  1.23s  notes`` on stdout, one per phase.

Contract: ``Progress(command).phase(name)`` times a phase and prints its line when it ends, or
``FAILED`` when it raised (an OSError becomes a ``BuildError`` naming the file). No phase starts
once a stopping signal has arrived (``sitebuild.interrupts``), so a stopped build never
reaches its last phase, the publish.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from sitebuild import interrupts
from sitebuild.errors import BuildError


class Progress:
    """Prints a command's progress lines and remembers its current phase."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.current = command
        self.start = time.perf_counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[list[str]]:
        """Time one phase; the caller appends notes to the yielded list."""
        self.current, notes, start = name, [], time.perf_counter()
        interrupts.check()  # "publish: interrupted": the phase that did not start
        try:
            yield notes
        except BaseException as err:
            took = time.perf_counter() - start
            print(f"[{self.command}] {name:<9} FAILED {took:5.2f}s", flush=True)
            if isinstance(err, OSError):
                raise BuildError(str(err.filename or name),
                                 f"{name}: {err.strerror or err}") from None
            raise
        took = time.perf_counter() - start
        print(f"[{self.command}] {name:<9} {took:6.2f}s  {' '.join(notes)}".rstrip(), flush=True)

    def detail(self, note: str) -> None:
        """An indented line under the current phase (one experiment, one file)."""
        print(f"[{self.command}]   {note}", flush=True)

    def total(self, note: str) -> None:
        took = time.perf_counter() - self.start
        print(f"[{self.command}] {'total':<9} {took:6.2f}s  {note}", flush=True)
