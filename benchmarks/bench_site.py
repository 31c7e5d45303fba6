"""Hand-run benchmark: our build and preview against the floor, plain MkDocs on the same pages.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_site.py [--repeat N]

On a copy of the project it measures, as fresh processes and interleaved round by round so
that machine load hits every scenario alike:
- ``floor``: ``mkdocs build`` of the rendered pages (``build/pages``, which mkdocs.yml names):
  what any MkDocs site of these pages costs, without our engine, figures, rendering or gates;
- ``cold-cached``: ``build_site.py build`` with an empty build folder except the engine's cached
  runs (the labs train models for half a minute; their cost is its own line, ``cold``);
- ``cold-drawn``: the same with the figures' cache entry kept as well;
- ``cold``: ``build_site.py build`` with an empty build folder;
- ``no-change``: the same build again with nothing changed;
- ``docs-edit``: a build after a sentence is appended to a page;
- ``engine-edit``: a build after a comment is appended to an engine module;
- ``serve-edit``, ``serve-lab``: under ``build_site.py serve``, from writing a sentence into a
  page's template to the served page holding it, for the chapter and for the longest page (the
  gradients lab); ``plain-edit``, ``plain-lab``: the same edits written straight into the
  rendered pages under a plain ``mkdocs serve --dirty``, the floor of a preview.
It prints the median of each and its ratio to the floor (to its plain twin for the previews).
Nothing here is asserted: speed targets live in notes and docs, never in timed tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns("build", "site", ".git", ".venv", ".venv-tools",
                                 "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache",
                                 ".hypothesis")
SERVE_SCENARIOS = ("serve-edit", "plain-edit", "serve-lab", "plain-lab")
SCENARIOS = ("floor", "cold-cached", "cold-drawn", "cold", "no-change", "docs-edit", "engine-edit",
             *SERVE_SCENARIOS)
PAGES = {"edit": "index", "lab": "labs/gradient-flow"}  # the chapter; the longest page
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


class Project:
    """A copy of one checkout and the interpreter that builds it."""

    def __init__(self, source: Path, python: str, base: Path) -> None:
        self.python = python
        self.root = base / "project"
        base.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, self.root, ignore=IGNORED)
        (self.root / "node_modules").symlink_to((source / "node_modules").resolve())
        self.edits = 0

    def run(self, *args: str) -> None:
        subprocess.run([self.python, *args], cwd=self.root, env=ENV, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)

    def build(self) -> None:
        self.run("build_site.py", "build", "--out", str(self.root / "site"))

    def append(self, relative: str, text: str) -> str:
        """Append ``text`` with ``{n}`` replaced by a fresh word (pages may hold no digits,
        so the edit count is spelled in letters); returns that word."""
        self.edits += 1
        word, n = "", self.edits
        while n:
            n, digit = divmod(n - 1, 26)
            word = chr(ord("a") + digit) + word
        with (self.root / relative).open("a", encoding="utf-8") as handle:
            handle.write(text.format(n=word))
        return word


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def preview_edits(project: Project, command: Callable[[int], list[str]], folder: str, kind: str,
                  rounds: int) -> dict[str, list[float]]:
    """Edit-to-served times under one running preview server (``command(port)``), editing the
    pages under ``folder``: ``docs`` (templates) or ``build/pages`` (rendered)."""
    port, log = free_port(), project.root.parent / f"{kind}.log"
    with log.open("w") as sink:
        server = subprocess.Popen(
            [project.python, *command(port)], cwd=project.root, env=ENV, stdout=sink,
            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    times: dict[str, list[float]] = {f"{kind}-{name}": [] for name in PAGES}

    def edit(page: str) -> float:
        word = project.append(f"{folder}/{page}.md", "\nServed sentence {n}.\n")
        marker, start = f"Served sentence {word}.", time.perf_counter()
        wait(lambda: marker in fetch(f"{base}{page}.html"), poll=0.02)
        elapsed = time.perf_counter() - start
        time.sleep(1.0)
        return elapsed

    try:
        wait(lambda: "How this site is built" in fetch(base + "building.html"))
        time.sleep(1.0)
        edit(PAGES["edit"])  # the first edit warms what a server warms once
        for _ in range(rounds):
            for name, page in PAGES.items():
                times[f"{kind}-{name}"].append(edit(page))
    finally:
        # SIGTERM, not SIGINT: a shell without job control starts background jobs with SIGINT
        # ignored, and the server would inherit that.
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return times


def wait(condition, timeout: float = 120.0, poll: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(poll)
    raise SystemExit("timed out waiting for the server")


def empty_build(project: Project, kept: tuple[str, ...] = ()) -> None:
    """Remove the build folder, keeping the cache entries whose names start with ``kept``."""
    build, keep = project.root / "build", project.root.parent / "kept-cache-entries"
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir()
    for prefix in kept:
        for entry in (build / "cache").glob(f"{prefix}*"):
            shutil.move(entry, keep / entry.name)
    shutil.rmtree(build, ignore_errors=True)
    if any(keep.iterdir()):
        (build / "cache").mkdir(parents=True)
        for entry in keep.iterdir():
            shutil.move(entry, build / "cache" / entry.name)


def one_round(project: Project, times: dict[str, list[float]]) -> None:
    times["floor"].append(timed(lambda: project.run(
        "-m", "mkdocs", "build", "-q", "-d", str(project.root.parent / "floor-site"))))
    empty_build(project, kept=("engine-",))
    times["cold-cached"].append(timed(project.build))
    empty_build(project, kept=("engine-", "generated-"))
    times["cold-drawn"].append(timed(project.build))
    empty_build(project)
    times["cold"].append(timed(project.build))
    times["no-change"].append(timed(project.build))
    project.append("docs/building.md", "\nA measured sentence {n}.\n")
    times["docs-edit"].append(timed(project.build))
    project.append("engine/__init__.py", "\n# a measured edit {n}\n")
    times["engine-edit"].append(timed(project.build))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Project(ROOT, sys.executable, Path(tmp))
        project.build()
        times: dict[str, list[float]] = {name: [] for name in SCENARIOS}
        for _ in range(args.repeat):
            one_round(project, times)
        project.build()  # the rendered pages of the unedited sources, for the plain server
        times.update(preview_edits(
            project, lambda port: ["build_site.py", "serve", "--port", str(port)], "docs",
            "serve", args.repeat))
        # MkDocs warns of every dirty build, so a strict one cannot be dirty (as ours).
        times.update(preview_edits(
            project, lambda port: ["-m", "mkdocs", "serve", "--dirty", "--no-strict", "-a",
                                   f"127.0.0.1:{port}"], "build/pages", "plain", args.repeat))
    floor = statistics.median(times["floor"])
    print(f"{ROOT} ({args.repeat} rounds, medians)")
    for name in SCENARIOS:
        median = statistics.median(times[name])
        twin = name.replace("serve-", "plain-")
        if name.startswith("serve-"):
            ratio = f"{median / statistics.median(times[twin]):5.2f}x plain mkdocs serve"
        elif name.startswith("plain-"):
            ratio = ""
        else:
            ratio = f"{median / floor:5.2f}x floor"
        print(f"  {name:<12} {median:6.2f}s  {ratio}".rstrip())


if __name__ == "__main__":
    main()
