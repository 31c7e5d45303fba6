"""Stopping on a signal: SIGTERM and Ctrl-C end a build or a server, even when Python drops
the interrupt.

Contract: inside ``stopping_on_signals()`` both signals raise ``KeyboardInterrupt`` and are
recorded, and ``check()`` raises it again once either has arrived, so a build that checks at
each phase never publishes after one, even where Python dropped the exception (an at-fork
hook, ``__del__``). On leaving, the previous handlers are back.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: The signals that stop a build or a server.
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_received: list[int] = []  # the signals that arrived, oldest first; empty: none


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def received() -> int | None:
    """The first stopping signal to arrive inside ``stopping_on_signals``, or None."""
    return _received[0] if _received else None


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a stopping signal has arrived (even one whose exception
    Python dropped)."""
    if _received:
        raise KeyboardInterrupt


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """SIGTERM (a service manager, ``kill``) and SIGINT (Ctrl-C) raise ``KeyboardInterrupt``
    here and are recorded for ``check``, unless ignored already. Must be entered in the main
    thread (Python runs handlers only there), before any other thread starts."""
    _received.clear()
    previous: dict[int, Any] = {}  # what signal.signal returned: a handler, SIG_DFL, ...
    previous_hook = sys.unraisablehook
    try:
        with _held():
            # A signal its starter ignores stays ignored (a shell without job control starts
            # background jobs with SIGINT ignored, so that Ctrl-C stops only the foreground one).
            for signum in SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    previous[signum] = signal.signal(signum, _interrupt)
            sys.unraisablehook = _quiet_if_recorded(previous_hook)
        yield
    finally:
        with _held():  # one arriving now meets the restored handler, not a half-restored state
            for signum, handler in previous.items():
                if handler is not None:  # None: set outside Python, which cannot put it back
                    signal.signal(signum, handler)
            sys.unraisablehook = previous_hook
            _received.clear()


@contextmanager
def _held() -> Iterator[None]:
    """The stopping signals wait (blocked in this thread) until the block ends."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _quiet_if_recorded(hook: Callable[[sys.UnraisableHookArgs], object]
                       ) -> Callable[[sys.UnraisableHookArgs], None]:
    def unraisable(report: sys.UnraisableHookArgs) -> None:
        if _received and isinstance(report.exc_value, KeyboardInterrupt):
            return  # not lost: ``check`` raises it again
        hook(report)

    return unraisable
