"""sitebuild.interrupts: SIGTERM and Ctrl-C stop the build even where Python drops the
``KeyboardInterrupt`` their handler raises (here a ``__del__``; in a build, an at-fork hook).

Each case runs in a fresh process: signal handlers and ``sys.unraisablehook`` are the whole
process's, and a test runner has its own."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest
from paths import ROOT

# A ``__del__`` that raises the signal: ``raise_signal`` runs the handler before it returns,
# so the handler's KeyboardInterrupt comes out of ``__del__``, and Python reports and drops it.
PRELUDE = """
import signal, sys
from sitebuild import interrupts

# Python's own Ctrl-C handler, whatever the runner's shell left (a background job starts with
# SIGINT ignored, and a starter's SIG_IGN is kept on purpose).
signal.signal(signal.SIGINT, signal.default_int_handler)

class Drops:
    def __init__(self, signum):
        self.signum = signum
    def __del__(self):
        signal.raise_signal(self.signum)
"""


def run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_dropped_interrupt_is_raised_again_by_check(signum: int) -> None:
    done = run(f"""
        with interrupts.stopping_on_signals():
            Drops({int(signum)})
            print("ran on past the signal")
            try:
                interrupts.check()
            except KeyboardInterrupt:
                print("check stopped it:", interrupts.received())
        """)
    assert done.stdout.splitlines() == ["ran on past the signal",
                                        f"check stopped it: {int(signum)}"], done.stderr
    assert done.stderr == ""  # no "Exception ignored in ... KeyboardInterrupt"


def test_a_signal_in_an_at_fork_hook_is_not_lost() -> None:
    # How a build once lost a SIGTERM: it arrived while a fork ran the parent's at-fork hooks
    # (logging's), where Python drops exceptions.
    done = run("""
        import os
        os.register_at_fork(after_in_parent=lambda: signal.raise_signal(signal.SIGTERM))
        with interrupts.stopping_on_signals():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            print("forked on past the signal")
            try:
                interrupts.check()
            except KeyboardInterrupt:
                print("check stopped it")
        """)
    assert done.stdout == "forked on past the signal\ncheck stopped it\n", done.stderr
    assert done.stderr == ""


def test_without_the_record_the_interrupt_is_lost() -> None:
    # Python's behaviour that the module exists for, shown with its own Ctrl-C handler: were
    # this to fail on a new Python, the record might no longer be needed.
    done = run("""
        Drops(signal.SIGINT)
        print("ran on past the signal")
        """)
    assert done.returncode == 0 and done.stdout == "ran on past the signal\n"
    assert "Exception ignored" in done.stderr and "KeyboardInterrupt" in done.stderr


def test_an_interrupt_that_lands_is_raised_and_recorded() -> None:
    done = run("""
        with interrupts.stopping_on_signals():
            try:
                signal.raise_signal(signal.SIGTERM)
            except KeyboardInterrupt:
                print("raised:", interrupts.received())
        """)
    assert done.stdout == f"raised: {int(signal.SIGTERM)}\n", done.stderr


def test_leaving_restores_the_handlers_and_forgets_the_signal() -> None:
    done = run("""
        before = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
        hook = sys.unraisablehook
        with interrupts.stopping_on_signals():
            Drops(signal.SIGTERM)
        interrupts.check()  # raises nothing: the record went with the context
        print({s: signal.getsignal(s) for s in interrupts.SIGNALS} == before,
              sys.unraisablehook is hook, interrupts.received())
        """)
    assert done.stdout == "True True None\n", done.stderr


def test_leaving_on_the_interrupt_restores_the_handlers_too() -> None:
    done = run("""
        before = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
        try:
            with interrupts.stopping_on_signals():
                signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            print({s: signal.getsignal(s) for s in interrupts.SIGNALS} == before,
                  interrupts.received())
        """)
    assert done.stdout == "True None\n", done.stderr


def test_a_signal_while_handlers_are_swapped_waits_for_the_swap() -> None:
    done = run("""
        with interrupts.stopping_on_signals():
            try:
                with interrupts._held():
                    signal.raise_signal(signal.SIGTERM)
                    print("held until the swap is done")
            except KeyboardInterrupt:
                print("then raised:", interrupts.received())
        """)
    assert done.stdout == f"held until the swap is done\nthen raised: {int(signal.SIGTERM)}\n", \
        done.stderr


def test_other_dropped_exceptions_are_still_reported() -> None:
    done = run("""
        class Fails:
            def __del__(self):
                raise ValueError("a real error in __del__")
        with interrupts.stopping_on_signals():
            Drops(signal.SIGTERM)
            Fails()
        """)
    assert "ValueError: a real error in __del__" in done.stderr
    assert "KeyboardInterrupt" not in done.stderr


def test_a_signal_ignored_by_the_starter_stays_ignored() -> None:
    done = run("""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with interrupts.stopping_on_signals():
            signal.raise_signal(signal.SIGINT)
            print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, interrupts.received())
            interrupts.check()
        print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
        """)
    assert done.stdout == "True None\nTrue\n", done.stderr
