"""Tests for sitebuild/preview_server.py: what the preview answers, and what it refuses.

Each test serves a small site folder and speaks HTTP to the server over a raw socket, so what
goes over the wire (a HEAD's missing body, a refused connection's one answer) is what is
asserted. A taken port, another site's Host header, a connection past the cap, a client that
goes quiet or trickles its request, a control character and a path out of the folder are each
refused; a page of the preview is served whole, rewritten, and asks to reload when a newer
site is shown.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sitebuild.errors import BuildError
from sitebuild.preview_server import RELOAD_PATH, PreviewServer, listen

PAGE = "<html><body>the preview</body></html>"


def site(folder: Path, page: str = PAGE) -> Path:
    """A built site: a page, a folder's index page, a page not found, an asset."""
    (folder / "labs").mkdir(parents=True)
    (folder / "page.html").write_text(page, encoding="utf-8")
    (folder / "labs" / "index.html").write_text("<body>labs</body>", encoding="utf-8")
    (folder / "404.html").write_text("<body>not here</body>", encoding="utf-8")
    (folder / "asset.txt").write_text("an asset", encoding="utf-8")
    return folder


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., tuple[PreviewServer, int]]]:
    """Start a server showing a site under ``tmp_path`` (limits as keywords); it and its port.
    Stopped after the test."""
    started: list[PreviewServer] = []

    def run(**limits: object) -> tuple[PreviewServer, int]:
        started.append(PreviewServer("127.0.0.1", 0, **limits))  # type: ignore[arg-type]
        started[-1].show(site(tmp_path / "site"))
        threading.Thread(target=started[-1].serve_forever, daemon=True).start()
        return started[-1], started[-1].server_address[1]

    yield run
    for server in started:
        server.shutdown()
        server.server_close()


def exchange(port: int, request: bytes, host: str | None = None) -> bytes:
    """Send ``request`` (its Host header added) and read the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head, _, rest = request.partition(b"\r\n")
        sock.sendall(head + f"\r\nHost: {host or f'127.0.0.1:{port}'}\r\n".encode() + rest)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def body(answer: bytes) -> bytes:
    return answer.partition(b"\r\n\r\n")[2]


def test_a_page_is_served_rewritten_and_a_head_without_body(start: Callable) -> None:
    _, port = start(rewrite_html=lambda page: page.replace("preview", "typeset preview"))
    got = exchange(port, b"GET /page.html HTTP/1.1\r\n\r\n")
    assert got.startswith(b"HTTP/1.0 200 ")
    assert body(got).startswith(b"<html><body>the typeset preview<script>")
    assert RELOAD_PATH.encode() + b"?seen=" in body(got) and body(got).endswith(b"</body></html>")
    assert f"Content-Length: {len(body(got))}\r\n".encode() in got
    head = exchange(port, b"HEAD /page.html HTTP/1.1\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 ") and head.endswith(b"\r\n\r\n")
    assert f"Content-Length: {len(body(got))}\r\n".encode() in head
    assert body(exchange(port, b"GET /asset.txt HTTP/1.1\r\n\r\n")) == b"an asset"
    index = exchange(port, b"GET /labs/ HTTP/1.1\r\n\r\n", f"localhost:{port}")
    assert b"<body>labs<script>" in index
    moved = exchange(port, b"GET /labs HTTP/1.1\r\n\r\n")
    assert moved.startswith(b"HTTP/1.0 301 ") and b"Location: /labs/\r\n" in moved


def test_nothing_outside_the_site_and_no_listing(start: Callable, tmp_path: Path) -> None:
    (tmp_path / "private.txt").write_text("SECRET")
    (tmp_path / "site" / "empty").mkdir(parents=True)
    _, port = start()
    for path in (b"/../private.txt", b"/%2e%2e/private.txt", b"/empty/", b"/nope.html"):
        got = exchange(port, b"GET " + path + b" HTTP/1.1\r\n\r\n")
        assert got.startswith(b"HTTP/1.0 404 ") and b"<body>not here" in body(got), path
        assert b"SECRET" not in got


def test_a_newer_site_answers_the_reload_question_and_is_served(start: Callable,
                                                                tmp_path: Path) -> None:
    server, port = start()
    shown = server.version
    assert f'("{shown}")'.encode() in body(exchange(port, b"GET /page.html HTTP/1.1\r\n\r\n"))
    asked: list[bytes] = []
    question = threading.Thread(target=lambda: asked.append(
        exchange(port, f"GET {RELOAD_PATH}?seen={shown} HTTP/1.1\r\n\r\n".encode())))
    question.start()
    time.sleep(0.5)
    assert not asked  # held while the site is the one the page came from
    server.show(site(tmp_path / "newer", "<body>edited</body>"))
    question.join(timeout=5)
    assert body(asked[0]) == server.version.encode() != shown.encode()
    assert body(exchange(port, b"GET /page.html HTTP/1.1\r\n\r\n")).startswith(b"<body>edited")
    # A tab left open from an earlier run of the preview reloads at once, whatever its count.
    other_run = "0000-" + server.version.split("-")[1]
    answer = exchange(port, f"GET {RELOAD_PATH}?seen={other_run} HTTP/1.1\r\n\r\n".encode())
    assert body(answer) == server.version.encode()
    # A page not found yet reloads too, once it is built.
    missing = body(exchange(port, b"GET /later.html HTTP/1.1\r\n\r\n"))
    assert missing.startswith(b"<body>not here<script>") and RELOAD_PATH.encode() in missing


def test_a_request_for_another_host_is_refused_unasked(start: Callable) -> None:
    _, port = start()
    for host in (f"attacker.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}"):
        got = exchange(port, b"GET /page.html HTTP/1.1\r\n\r\n", host=host)
        assert got.startswith(b"HTTP/1.0 421 ") and b"the preview<" not in got, host
    assert b" 501 " in exchange(port, b"POST /page.html HTTP/1.1\r\n\r\n")[:20]


def test_connections_past_the_cap_get_an_answer_no_thread(start: Callable) -> None:
    _, port = start(max_connections=3)
    threads = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    time.sleep(0.3)  # each accepted, each holding a slot (a thread, and its request's timer)
    held = threading.active_count()
    assert held == threads + 6
    extra = [exchange(port, b"GET /page.html HTTP/1.1\r\n\r\n") for _ in range(10)]
    assert all(got.startswith(b"HTTP/1.0 503 ") for got in extra)
    assert threading.active_count() == held
    for sock in idle:
        sock.close()
    time.sleep(0.3)  # the slots come back
    assert b"the preview" in exchange(port, b"GET /page.html HTTP/1.1\r\n\r\n")


def test_a_client_that_goes_quiet_is_closed(start: Callable) -> None:
    _, port = start(idle_seconds=0.5)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /page.html HTTP/1.1\r\n")  # and then nothing
        begun = time.monotonic()
        assert sock.recv(100) == b""  # closed, not answered
        assert time.monotonic() - begun < 5


def test_a_taken_port_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BuildError) as caught:
            listen("127.0.0.1", port)
    assert str(caught.value) == f"serve: port {port} is already in use (try --port N)"


def test_a_request_trickled_in_is_cut_at_its_deadline(start: Callable) -> None:
    # Each header line comes well within the idle limit; the whole never comes in time.
    _, port = start(idle_seconds=5, request_seconds=1)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        begun = time.monotonic()
        sock.sendall(b"GET /page.html HTTP/1.1\r\n")
        with contextlib.suppress(OSError):
            for number in range(40):
                sock.sendall(f"X-Slow-{number}: 1\r\n".encode())
                time.sleep(0.2)
                if time.monotonic() - begun > 3:
                    break
        assert sock.recv(100) == b""  # closed, not answered
        assert time.monotonic() - begun < 3


def test_a_control_character_in_the_path_is_answered_400(start: Callable) -> None:
    _, port = start()
    for path in (b"/a\x00b", b"/a\x7fb", b"/a\x1bb", b"/a%00b.html"):
        got = exchange(port, b"GET " + path + b" HTTP/1.1\r\n\r\n")
        assert got.startswith(b"HTTP/1.0 400 "), (path, got[:40])


def test_a_large_asset_streams_and_a_latin1_page_is_served(start: Callable,
                                                          tmp_path: Path) -> None:
    import tracemalloc

    server, port = start(rewrite_html=lambda page: page)
    size = 64 * 2**20
    with (server.site / "big.bin").open("wb") as big:
        big.truncate(size)
    (server.site / "latin1.html").write_bytes("<p>caf\xe9</p>".encode("latin-1"))
    latin = exchange(port, b"GET /latin1.html HTTP/1.1\r\n\r\n")
    assert latin.startswith(b"HTTP/1.0 200 ") and latin.endswith(b"caf\xe9</p>")
    tracemalloc.start()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            received = 0
            while chunk := sock.recv(2**20):
                received += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert received > size
    assert peak < size // 8, peak  # in pieces, never the whole asset at once
