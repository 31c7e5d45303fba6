"""Tests for `build_site.py serve` (sitebuild/serve.py): port checks and live rebuilds.

A bad or taken port must fail at once, before the site is built. While serving, an edit to
a page, a table template or an engine file must show up in what is served, re-running only
what depends on it (the cache status of each phase says which ran); a page edit is rendered in
the serving process unless code changed since it started; a broken edit is one located line
and the previous preview stays served. Only a request naming the preview is answered, and
nothing from outside the project is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from test_build_site import project_copy, run

from sitebuild.serve import POLL_SECONDS, Changes
from tracefile import SCHEMAS


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError("timed out")


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def phase_lines(log: Path, phase: str) -> list[str]:
    return [line for line in log.read_text().splitlines()
            if line.startswith(f"[build] {phase} ")]


def listening_ports(pid: int) -> set[int]:
    """The TCP ports that process ``pid`` and its descendants listen on (Linux)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            parents[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
    tree, grew = {pid}, True
    while grew:
        grew = bool({child for child, parent in parents.items() if parent in tree} - tree)
        tree |= {child for child, parent in parents.items() if parent in tree}
    inodes = set()
    for member in tree:
        with contextlib.suppress(OSError):
            inodes |= {os.readlink(fd) for fd in Path(f"/proc/{member}/fd").iterdir()}
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, _, state, *_, inode = row.split()[1:10]
            if state == "0A" and f"socket:[{inode}]" in inodes:  # 0A: listening
                ports.add(int(local.rpartition(":")[2], 16))
    return ports


def test_a_taken_port_fails_before_building() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run(["serve", "--port", str(port)])
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"serve: port {port} is already in use (try --port N)\n"


def test_a_file_saved_in_several_writes_is_one_change_told_once_it_stands_still(
        tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("first")
    changes = Changes((tmp_path,))

    def save_in_steps() -> None:  # as `Path.write_text` does: truncate, then write
        for text in ("", "sec", "second", "second, saved"):
            page.write_text(text)
            time.sleep(POLL_SECONDS / 2)

    saving = threading.Thread(target=save_in_steps)
    saving.start()
    while not (changed := changes.poll()):
        time.sleep(POLL_SECONDS / 10)
    saving.join()
    assert changed == {page.as_posix()} and page.read_text() == "second, saved"
    assert changes.poll() == set()  # the last write was seen before the change was told


def lines_of(log: Path, prefix: str) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith(prefix)]


@pytest.mark.slow
def test_serve_rebuilds_after_page_template_and_engine_edits(tmp_path: Path) -> None:
    proj = project_copy(tmp_path)
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("w") as sink:
        server = subprocess.Popen(
            [sys.executable, str(proj / "build_site.py"), "serve", "--port", str(port)],
            cwd=proj, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: "How this site is built" in fetch(f"{base}/building.html"))
        assert f"<loc>{base}/index.html</loc>" in fetch(f"{base}/sitemap.xml")  # instant nav
        assert not (proj / "site").exists()  # a preview publishes nothing
        page = proj / "docs" / "building.md"
        text = page.read_text()
        page.write_text(text + "\nA sentence added while serving.\n")
        wait_for(lambda: "A sentence added while serving." in fetch(f"{base}/building.html"))
        # A page edit is rendered again inside the server: no engine run, no new process.
        assert len(lines_of(log, "[serve] engine ")) == 1 and not lines_of(log, "[render] ")
        # A broken edit is one located line; the server goes on serving the last preview.
        page.write_text(text + "\n{{ tv(\"CONFIG.chapter\" }}\n")
        wait_for(lambda: lines_of(log, "[serve] rebuild failed"))
        assert any(line.startswith("docs/building.md:") for line in log.read_text().splitlines())
        # ... shown atop every page served, which otherwise stay as they were ...
        wait_for(lambda: "the last edit did not build" in fetch(f"{base}/index.html"))
        served = fetch(f"{base}/building.html")
        assert "A sentence added while serving." in served and "docs/building.md:" in served
        time.sleep(2 * POLL_SECONDS + 1)
        assert len(lines_of(log, "[serve] rebuild failed")) == 1  # said once, not each poll
        page.write_text(text + "\nA repaired sentence.\n")
        wait_for(lambda: "A repaired sentence." in fetch(f"{base}/building.html"))
        wait_for(lambda: "the last edit did not build" not in fetch(f"{base}/index.html"))
        # What is served: only to a request naming the preview, never a file from outside,
        # and by no server but the one on the preview's port.
        assert listening_ports(server.pid) == {port}
        foreign = urllib.request.Request(f"{base}/index.html", headers={"Host": "rebound.example"})
        with pytest.raises(urllib.error.HTTPError, match="421"):
            urllib.request.urlopen(foreign, timeout=5)
        (tmp_path / "private.txt").write_text("SECRET")
        (proj / "docs" / "assets" / "notes.txt").symlink_to(tmp_path / "private.txt")
        wait_for(lambda: "is a symbolic link" in fetch(f"{base}/index.html"))
        assert "SECRET" not in fetch(f"{base}/assets/notes.txt")
        (proj / "docs" / "assets" / "notes.txt").unlink()
        wait_for(lambda: "the last edit did not build" not in fetch(f"{base}/index.html"))
        template = proj / "diagrams" / "templates" / "stack.html.j2"
        source = template.read_text()
        assert "<caption>Plain and residual stacks" in source
        template.write_text(source.replace("<caption>Plain and residual stacks",
                                           "<caption>Plain and residual stacks, re-rendered", 1))
        wait_for(lambda: "Plain and residual stacks, re-rendered" in fetch(f"{base}/index.html"))
        # After a code edit even a page edit runs a fresh process: no stale module is used.
        page.write_text(page.read_text() + "\nA second sentence.\n")
        wait_for(lambda: "A second sentence." in fetch(f"{base}/building.html"))
        # An engine edit inside a listing the chapter shows: the listing changes although no
        # page's Markdown does, and since the edit is a comment, no record goes stale.
        source = proj / "engine" / "nn" / "residual.py"
        code = source.read_text()
        assert "# --8<-- [end:residual-add]" in code
        source.write_text(code.replace("# --8<-- [end:residual-add]",
                                       "# a comment added while serving\n"
                                       "# --8<-- [end:residual-add]", 1))
        wait_for(lambda: "a comment added while serving" in fetch(f"{base}/index.html"), 300)
        engine = lines_of(log, "[render] engine ")
        generate = lines_of(log, "[render] generate ")
        # template edit, page edit after code, engine comment: each read every record
        assert [line.endswith(f"{len(SCHEMAS)} trace(s): {len(SCHEMAS)} recorded")
                for line in engine] == [True, True, True], engine
        assert ["(cache miss)" in line for line in generate[:2]] == [True, False], generate
    finally:
        # SIGTERM stops serve as Ctrl-C does, and unlike SIGINT reaches it even when this run
        # was started as a background job (SIGINT ignored, which serve then keeps).
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    assert lines_of(log, "[serve] stopped")
    assert server.returncode == 0
