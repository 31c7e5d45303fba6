"""Killed builds: SIGKILL at each phase leaves the published site as it was, and the next build
clears what the killed one left behind (temporary folders named with its pid) and succeeds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from paths import GOLDEN_REPORT, GOLDEN_TRACE, ROOT
from process_support import children, command, running
from site_support import SHARED_CACHE, build_or_fail, tree_digest

from sitebuild.build_folder import remove_leftovers
from sitebuild.paths import TEMPORARY, temp_prefix

# (phase, what shows that phase is running): the build is killed as soon as it does. The
# engine and MkDocs phases make temporary folders; the render starts when the generate line is
# out, the gates when MkDocs's is.
PHASES: dict[str, Callable[[Path, Path, list[str]], bool]] = {
    "engine": lambda build, out, lines: any(p.name.startswith("engine-pid")
                                            for p in build.iterdir()),
    "render": lambda build, out, lines: any(line.startswith("[build] generate ")
                                            and "FAILED" not in line for line in lines),
    "mkdocs": lambda build, out, lines: any(p.name.startswith(f".{out.name}-tmp-pid")
                                            for p in build.iterdir()),
    "gates": lambda build, out, lines: any(line.startswith("[build] mkdocs ")
                                           and "FAILED" not in line for line in lines),
}


def started(args: list[str]) -> tuple[subprocess.Popen[str], list[str]]:
    """The build running, and the list its stdout lines are appended to as they come."""
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    assert proc.stdout is not None
    threading.Thread(target=_collect, args=(proc.stdout, lines), daemon=True).start()
    return proc, lines


def _collect(stream: IO[str], lines: list[str]) -> None:
    for line in stream:
        lines.append(line)


def leftovers(*folders: Path) -> list[str]:
    return sorted(p.name for folder in folders if folder.is_dir() for p in folder.iterdir()
                  if TEMPORARY.fullmatch(p.name))


def releases(folder: Path) -> list[str]:
    """The release folders of the sites published in ``folder``."""
    return sorted(p.name for p in folder.glob(".site-release-*"))


def dead_pid() -> int:
    """A pid no process has: a finished child's, reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("name", [  # ids free of this process's pid
    temp_prefix("engine") + "x1", ".site-tmp-pid42-x1", ".site-old-pid42", ".tmp-engine-a-pid42-x1",
    ".site-link-pid42-new",
], ids=["this-process", "site", "old-site", "engine-cache", "site-link"])
def test_every_temporary_name_a_build_makes_is_recognised(name: str) -> None:
    assert TEMPORARY.fullmatch(name), name


def test_leftovers_of_a_dead_build_go_and_a_live_builds_stay(tmp_path: Path) -> None:
    dead, live = dead_pid(), os.getppid()
    for name in (f"engine-pid{dead}-a", f".site-tmp-pid{dead}-b", f"engine-pid{live}-c",
                 "engine-results", ".site-release-x"):
        (tmp_path / name).mkdir()
    (tmp_path / "site").symlink_to(".site-release-x")
    (tmp_path / f".site-link-pid{dead}-new").symlink_to(".site-release-x")
    assert remove_leftovers(tmp_path) == [f".site-link-pid{dead}-new", f".site-tmp-pid{dead}-b",
                                          f"engine-pid{dead}-a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".site-release-x", f"engine-pid{live}-c", "engine-results", "site"]


@pytest.mark.slow
@pytest.mark.parametrize("phase", PHASES)
def test_a_build_killed_in_a_phase_leaves_the_site_and_the_next_build_clean(
        tmp_path: Path, phase: str) -> None:
    out, build = tmp_path / "site", tmp_path / "build"
    build_or_fail(out, build)  # the previous site
    before = tree_digest(out)
    # A cold cache for the killed build, so its phases really run; for the engine phase,
    # --fresh too, so the engine computes rather than reads the records.
    args = [sys.executable, "build_site.py", "build", "--out", str(out), "--build-dir",
            str(build), "--cache-dir", str(tmp_path / "cold"), "--force",
            *(["--fresh"] if phase == "engine" else []),
            "--trace", str(GOLDEN_TRACE), "--report", str(GOLDEN_REPORT)]
    proc, lines = started(args)
    deadline = time.monotonic() + 240
    # In the engine phase, once its runs have started: they must not outlive the build.
    try:
        while not (PHASES[phase](build, out, lines) and (phase != "engine" or [
                pid for pid in children(proc.pid) if b"engine" in command(pid)])):
            assert proc.poll() is None, f"the build ended before its {phase} phase was seen"
            assert time.monotonic() < deadline, f"the {phase} phase never started"
            time.sleep(0.01)
    except AssertionError:
        proc.kill()  # never leave a build running behind a failed test
        proc.wait(timeout=60)
        raise
    helpers = children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    # The kernel ends them at once. Left to themselves they would run on until their next
    # write to the dead build's pipe, or to the end, seconds later, writing into a folder
    # the next build is clearing.
    gone = time.monotonic() + 1
    while [pid for pid in helpers if running(pid)] and time.monotonic() < gone:
        time.sleep(0.05)
    assert [pid for pid in helpers if running(pid)] == [], "a killed build's process lives on"
    assert tree_digest(out) == before, "the published site changed"
    if phase != "render":  # the render writes each page whole, in place: no folder of its own
        assert leftovers(build), "a killed build should have left its temporary folder"
    build_or_fail(out, build, extra=("--cache-dir", str(SHARED_CACHE["dir"]), "--force"))
    assert leftovers(build, build / "cache", tmp_path) == []


#: Run a build that kills itself with SIGKILL inside the publish phase, at ``sys.argv[1]``:
#: "before-swap" (the new site's permissions set, the link not yet replaced) or "after-swap"
#: (the link names the new release, the previous release not yet removed). The phase takes
#: milliseconds, too short to catch from outside; the build's own module is patched instead.
KILL_IN_PUBLISH = """
import os, runpy, signal, sys
import sitebuild.publish as publish

where = sys.argv.pop(1)
name = "ordinary_permissions" if where == "before-swap" else "_point"
original = getattr(publish, name)

def killed(*args):
    result = original(*args)
    os.kill(os.getpid(), signal.SIGKILL)
    return result

setattr(publish, name, killed)
sys.argv[0] = "build_site.py"
runpy.run_path("build_site.py", run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", ["before-swap", "after-swap"])
def test_a_build_killed_while_publishing_leaves_a_whole_site(tmp_path: Path, where: str) -> None:
    out, build = tmp_path / "site", tmp_path / "build"
    build_or_fail(out, build)  # the previous site, with the learner report
    before = tree_digest(out)
    # The killed build publishes another site (no learner report), so that the site found
    # afterwards tells which of the two it is.
    cache = ("--cache-dir", str(SHARED_CACHE["dir"]))
    other = build_or_fail(tmp_path / "other" / "site", tmp_path / "other-build", report=None,
                          extra=cache)
    after = tree_digest(other.site)
    assert after != before
    done = subprocess.run(
        [sys.executable, "-u", "-c", KILL_IN_PUBLISH, where, "build", "--out", str(out),
         "--build-dir", str(build), *cache, "--trace", str(GOLDEN_TRACE)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    assert "[build] publish" not in done.stdout and "[build] gates" in done.stdout
    # Before the swap the previous site is whole and untouched; after it, the new one is
    # whole: never a mixture, never a missing site.
    assert tree_digest(out) == (before if where == "before-swap" else after)
    if where == "before-swap":
        assert leftovers(build), "the killed build should have left its temporary folder"
    else:
        assert len(releases(tmp_path)) == 2, "the killed build should have left a release"
    build_or_fail(out, build, extra=(*cache, "--force"))
    assert leftovers(build, build / "cache", tmp_path) == []
    assert releases(tmp_path) == [os.readlink(out)]
    assert tree_digest(out) == before


# A build whose gates raise SIGTERM inside a ``__del__``: the handler's KeyboardInterrupt comes
# out there, where Python drops it (as it did once in an at-fork hook, and the build went on
# to publish and exit 0).
DROPPING_BUILD = """
import signal, sys
import build_site
from sitebuild import gates

class Drops:
    def __del__(self):
        signal.raise_signal(signal.SIGTERM)

run_gates = gates.run_gates

def gates_that_drop_a_sigterm(*args, **kwargs):
    Drops()
    return run_gates(*args, **kwargs)

gates.run_gates = gates_that_drop_a_sigterm
sys.exit(build_site.main(sys.argv[1:]))
"""


def sigterm_at_the_engine_start(args: list[str], build: Path, out: Path,
                                ) -> tuple[int, str, str]:
    """A build sent SIGTERM once its engine runs start (an empty cache and --fresh: they do
    run)."""
    proc = subprocess.Popen([sys.executable, "build_site.py", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not PHASES["engine"](build, out, []):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    return proc.returncode, stdout, stderr


def sigterm_dropped_in_the_gates(args: list[str], build: Path, out: Path,
                                 ) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", DROPPING_BUILD, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("stop", "cold", "message"), [
    (sigterm_at_the_engine_start, True, "engine: interrupted"),
    (sigterm_dropped_in_the_gates, False, "publish: interrupted"),
], ids=["at-the-engine-start", "dropped-in-the-gates"])
def test_sigterm_stops_a_build_cleanly(
        tmp_path: Path, stop: Callable[[list[str], Path, Path], tuple[int, str, str]],
        cold: bool, message: str) -> None:
    out, build = tmp_path / "site", tmp_path / "build"
    build_or_fail(out, build)
    before = tree_digest(out)
    cache = tmp_path / "cold" if cold else SHARED_CACHE["dir"]
    code, stdout, stderr = stop(["build", "--out", str(out), "--build-dir", str(build),
                                 "--cache-dir", str(cache), "--force",
                                 *(["--fresh"] if cold else [])], build, out)
    assert (code, stderr) == (130, f"{message}\n"), stdout
    assert "[build] publish" not in stdout
    assert tree_digest(out) == before
    assert leftovers(build, tmp_path / "cold", out.parent) == []


def test_a_folder_no_build_has_used_is_refused_and_kept_whole(tmp_path: Path) -> None:
    from sitebuild.build_folder import check_build_folder, exclusive
    from sitebuild.errors import BuildError

    (tmp_path / "cache").mkdir()  # the engine's cell cache may come before any build
    check_build_folder(tmp_path)
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "draft.md").write_text("mine")
    with pytest.raises(BuildError, match=r"/pages: is in a folder no build has used"), \
            exclusive(tmp_path):
        pass
    assert (tmp_path / "pages" / "draft.md").read_text() == "mine"
    assert not (tmp_path / ".lock").exists()
