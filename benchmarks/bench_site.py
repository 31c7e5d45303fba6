"""Hand-run benchmark: our build against the floor, plain MkDocs on the very same pages.

Run from the project root with the project's virtualenv:

    .venv/bin/python benchmarks/bench_site.py [--repeat N] [--project DIR --python EXE]...

For each project (default: this one; give ``--project``/``--python`` pairs to compare two
checkouts, e.g. an older commit in a worktree with its own virtualenv), it works on a copy and
measures, as fresh processes and interleaved round by round so that machine load hits every
scenario alike:
- ``floor``: ``mkdocs build`` of the pages already rendered by our hook (the same Markdown,
  assets, vendored KaTeX and trace files, the same theme and extensions), without our hook,
  engine, figures or gates: what any MkDocs site of these pages costs;
- ``cold-cached``: ``build_site.py build`` with an empty build folder except the engine's cached
  runs (the labs train models for half a minute; their cost is its own line, ``cold``);
- ``cold-drawn``: the same with the figures' cache entry kept as well (the charts drawn from
  these traces by this code): what a cold build costs beyond drawing its charts;
- ``cold``: ``build_site.py build`` with an empty build folder;
- ``no-change``: the same build again with nothing changed;
- ``docs-edit``: a build after a sentence is appended to a page;
- ``engine-edit``: a build after a comment is appended to an engine module;
- ``serve-first``, ``serve-edit``, ``serve-lab``: under ``build_site.py serve``, once it has
  primed its per-page memos (``sitebuild.warm``), from writing a page to the served page
  holding the new sentence: the server's first edit (a short page), later edits to that page,
  and edits to the longest page (the gradients lab).
It prints the median of each and its ratio to the floor. Nothing here is asserted: speed
targets live in notes and docs, never in timed tests.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns("build", "site", ".git", ".venv", ".venv-tools",
                                 "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache",
                                 ".hypothesis")
SERVE_SCENARIOS = ("serve-first", "serve-edit", "serve-lab")
SCENARIOS = ("floor", "cold-cached", "cold-drawn", "cold", "no-change", "docs-edit", "engine-edit",
             *SERVE_SCENARIOS)
PRIMED = "[serve] pages remembered"  # what serve prints once its memos are filled
LONGEST_PAGE = "labs/gradient-flow"  # the page with the most HTML: the slowest to rebuild
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

    def make_floor(self) -> Path:
        """A plain MkDocs project of the pages as the last build rendered them."""
        floor = self.root.parent / "floor"
        shutil.rmtree(floor, ignore_errors=True)
        site = self.root / "site"
        docs = floor / "docs"
        shutil.copytree(self.root / "docs", docs)
        # The rendered Markdown is what our hook hands MkDocs: capture it from the site's own
        # search index would lose markup, so render it again through the hook's page renderer.
        self.run("-c", RENDER_PAGES, str(docs))
        for folder in ("assets/vendor", "trace"):
            if (site / folder).is_dir():
                shutil.copytree(site / folder, docs / folder, dirs_exist_ok=True)
        config = (self.root / "mkdocs.yml").read_text(encoding="utf-8")
        config = config.replace("hooks:\n  - sitebuild/hook.py\n", "")
        config = config.replace("hooks:\n  - diagrams/site_hook.py\n", "")
        config = config.replace('base_path: ["."]', f'base_path: ["{self.root}"]')
        (floor / "mkdocs.yml").write_text(config, encoding="utf-8")
        return floor


# Rendering the pages through whichever hook this checkout has, into the floor's docs folder.
RENDER_PAGES = """
import sys
from pathlib import Path
from mkdocs.config import load_config
from mkdocs.structure.files import get_files
from mkdocs.structure.pages import Page
root, docs = Path.cwd(), Path(sys.argv[1])
config = load_config(str(root / "mkdocs.yml"))
config = config.plugins.on_config(config)
files = config.plugins.on_files(get_files(config), config=config)
# A hook that puts charts in after the Markdown conversion leaves marks: the floor's pages
# hold the charts' SVGs themselves, as a plain MkDocs site of these pages would.
hook = sys.modules.get("sitebuild/hook.py")
context = hook._state.get("context") if hook is not None else None
for file in files.documentation_pages():
    page = Page(None, file, config)
    page.read_source(config)
    text = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=files)
    if hasattr(context, "insert_figures"):
        text = context.insert_figures(text, file.src_uri)
    (docs / file.src_uri).write_text(text, encoding="utf-8")
"""


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


def serve_edits(project: Project, rounds: int) -> dict[str, list[float]]:
    """Edit-to-served times under one running server, once it says its per-page memos are
    ready: its first page edit, then edits to a short page and to the longest one."""
    port, log = free_port(), project.root.parent / "serve.log"
    with log.open("w") as sink:
        server = subprocess.Popen(
            [project.python, "build_site.py", "serve", "--port", str(port)], cwd=project.root,
            env=ENV, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    times: dict[str, list[float]] = {name: [] for name in SERVE_SCENARIOS}

    def edit(page: str, served: str) -> float:
        word = project.append(f"docs/{page}", "\nServed sentence {n}.\n")
        marker, start = f"Served sentence {word}.", time.perf_counter()
        wait(lambda: marker in fetch(base + served), poll=0.02)
        elapsed = time.perf_counter() - start
        time.sleep(1.0)
        return elapsed

    try:
        wait(lambda: "How this site is built" in fetch(base + "building.html"))
        if PRIMED in (project.root / "build_site.py").read_text():  # older checkouts lack it
            wait(lambda: PRIMED in log.read_text())  # its per-page memos are ready
        time.sleep(1.0)
        times["serve-first"].append(edit("building.md", "building.html"))
        for _ in range(rounds):
            times["serve-edit"].append(edit("building.md", "building.html"))
            times["serve-lab"].append(edit(LONGEST_PAGE + ".md", LONGEST_PAGE + ".html"))
    finally:
        # SIGTERM, not SIGINT: a shell without job control starts background jobs with SIGINT
        # ignored, and the server would inherit that; serve treats SIGTERM as Ctrl-C.
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


def one_round(project: Project, floor: Path, times: dict[str, list[float]]) -> None:
    times["floor"].append(timed(lambda: project.run(
        "-m", "mkdocs", "build", "-q", "-f", str(floor / "mkdocs.yml"),
        "-d", str(floor / "site"))))
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
    parser.add_argument("--project", type=Path, action="append", help="a checkout to measure")
    parser.add_argument("--python", action="append", help="its interpreter (same order)")
    args = parser.parse_args()
    sources = args.project or [ROOT]
    pythons = args.python or [sys.executable] * len(sources)
    with tempfile.TemporaryDirectory() as tmp:
        projects = [Project(source, python, Path(tmp) / str(i))
                    for i, (source, python) in enumerate(zip(sources, pythons, strict=True))]
        floors = []
        for project in projects:
            project.build()
            floors.append(project.make_floor())
        times = [{name: [] for name in SCENARIOS} for _ in projects]
        for _ in range(args.repeat):  # round by round, project by project: load hits all alike
            for project, floor, mine in zip(projects, floors, times, strict=True):
                one_round(project, floor, mine)
        for project, mine in zip(projects, times, strict=True):
            mine.update(serve_edits(project, args.repeat))
    for source, mine in zip(sources, times, strict=True):
        floor = statistics.median(mine["floor"])
        print(f"{source} ({args.repeat} rounds, medians)")
        for name in SCENARIOS:
            median = statistics.median(mine[name])
            print(f"  {name:<12} {median:6.2f}s  {median / floor:5.2f}x floor")


if __name__ == "__main__":
    main()
