"""Tests for sitebuild/preview_proxy.py: what the preview answers, and what it refuses.

Each test runs the proxy in front of a small stand-in for MkDocs' server and speaks HTTP to it
over a raw socket, so what goes over the wire (a HEAD's missing body, a refused connection's
one answer) is what is asserted. A taken port, another site's Host header, a connection past
the cap and a client that goes quiet are each refused; a request of the preview itself is
forwarded whole.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import ClassVar

import pytest

from sitebuild.errors import BuildError
from sitebuild.preview_proxy import Proxy, free_port, listen

PAGE = b"<html><body>the preview</body></html>"
LINKED = b'<link rel="canonical" href="http://127.0.0.1:%d/page/">'


class StandIn(http.server.BaseHTTPRequestHandler):
    """MkDocs' server as the proxy sees it: a page, a redirect, and a count of requests."""

    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        StandIn.requests.append(self.path)
        if self.path == "/linked":  # MkDocs' pages name its own address
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(LINKED % self.server.server_address[1])
            return
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/page/")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        pass


def running(server: http.server.HTTPServer) -> http.server.HTTPServer:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def upstream() -> Iterator[int]:
    StandIn.requests = []
    server = running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandIn))
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def start_proxy(upstream: int) -> Iterator[Callable[..., int]]:
    """Start a proxy in front of the stand-in, or of ``to`` (limits as keywords); its own
    port. Stopped after the test."""
    started: list[Proxy] = []

    def start(to: int = upstream, **limits: float) -> int:
        started.append(Proxy("127.0.0.1", 0, to, **limits))  # type: ignore[arg-type]
        return running(started[-1]).server_address[1]

    yield start
    for proxy in started:
            proxy.server_close()


def exchange(port: int, request: bytes, host: str | None = None) -> bytes:
    """Send ``request`` (its Host header added) and read the answer until the proxy closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head, _, rest = request.partition(b"\r\n")
        sock.sendall(head + f"\r\nHost: {host or f'127.0.0.1:{port}'}\r\n".encode() + rest)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_get_is_forwarded_whole_and_a_head_without_body(start_proxy: Callable[..., int]) -> None:
    port = start_proxy()
    got = exchange(port, b"GET /page HTTP/1.1\r\n\r\n")
    assert got.startswith(b"HTTP/1.0 200 ") and got.endswith(b"\r\n\r\n" + PAGE)
    assert f"Content-Length: {len(PAGE)}\r\n".encode() in got
    head = exchange(port, b"HEAD /page HTTP/1.1\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 ") and head.endswith(b"\r\n\r\n")
    assert f"Content-Length: {len(PAGE)}\r\n".encode() in head and PAGE not in head
    linked = exchange(port, b"GET /linked HTTP/1.1\r\n\r\n")
    assert linked.endswith(b"\r\n\r\n" + LINKED % port)  # the reader's address
    moved = exchange(port, b"GET /moved HTTP/1.1\r\n\r\n", host=f"localhost:{port}")
    assert moved.startswith(b"HTTP/1.0 302 ") and b"Location: /page/\r\n" in moved


def test_a_request_for_another_host_is_refused_unasked(start_proxy: Callable[..., int]) -> None:
    port = start_proxy()
    for host in (f"attacker.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}"):
        got = exchange(port, b"GET /page HTTP/1.1\r\n\r\n", host=host)
        assert got.startswith(b"HTTP/1.0 421 ") and PAGE not in got, host
    assert b" 400 " in exchange(port, b"GET http://127.0.0.1/page HTTP/1.1\r\n\r\n")[:20]
    assert StandIn.requests == []  # MkDocs was never asked
    assert b" 501 " in exchange(port, b"POST /page HTTP/1.1\r\n\r\n")[:20]


def test_connections_past_the_cap_get_an_answer_no_thread(start_proxy: Callable[..., int]) -> None:
    port = start_proxy(max_connections=3)
    threads = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    time.sleep(0.3)  # each accepted, each holding a slot (a thread, and its request's timer)
    held = threading.active_count()
    assert held == threads + 6
    extra = [exchange(port, b"GET /page HTTP/1.1\r\n\r\n") for _ in range(10)]
    assert all(got.startswith(b"HTTP/1.0 503 ") for got in extra)
    assert threading.active_count() == held
    for sock in idle:
        sock.close()
    time.sleep(0.3)  # the slots come back
    assert exchange(port, b"GET /page HTTP/1.1\r\n\r\n").endswith(PAGE)


def test_a_client_that_goes_quiet_is_closed(start_proxy: Callable[..., int]) -> None:
    port = start_proxy(idle_seconds=0.5)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /page HTTP/1.1\r\n")  # and then nothing
        start = time.monotonic()
        assert sock.recv(100) == b""  # closed, not answered
        assert time.monotonic() - start < 5
    assert StandIn.requests == []


def test_no_server_behind_it_is_a_bad_gateway(start_proxy: Callable[..., int]) -> None:
    got = exchange(start_proxy(free_port("127.0.0.1")), b"GET /page HTTP/1.1\r\n\r\n")
    assert got.startswith(b"HTTP/1.0 502 ")


def test_a_taken_port_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BuildError) as caught:
            listen("127.0.0.1", port, free_port("127.0.0.1"))
    assert str(caught.value) == f"serve: port {port} is already in use (try --port N)"


def test_a_request_trickled_in_is_cut_at_its_deadline(start_proxy: Callable[..., int]) -> None:
    # Each header line comes well within the idle limit; the whole never comes in time.
    port = start_proxy(idle_seconds=5, request_seconds=1)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        start = time.monotonic()
        sock.sendall(b"GET /page HTTP/1.1\r\n")
        with contextlib.suppress(OSError):
            for number in range(40):
                sock.sendall(f"X-Slow-{number}: 1\r\n".encode())
                time.sleep(0.2)
                if time.monotonic() - start > 3:
                    break
        assert sock.recv(100) == b""  # closed, not answered
        assert time.monotonic() - start < 3
    assert StandIn.requests == []


def test_a_control_character_in_the_path_is_answered_400(start_proxy: Callable[..., int]
                                                        ) -> None:
    port = start_proxy()
    for path in (b"/a\x00b", b"/a\x7fb", b"/a\x1bb"):
        got = exchange(port, b"GET " + path + b" HTTP/1.1\r\n\r\n")
        assert got.startswith(b"HTTP/1.0 400 "), (path, got[:40])
    assert StandIn.requests == []


class Large(http.server.BaseHTTPRequestHandler):
    """An asset far larger than a page, and a page that is not UTF-8."""

    SIZE = 64 * 2**20

    def do_GET(self) -> None:
        if self.path == "/latin1.html":
            body = "<p>caf\xe9</p>".encode("latin-1")
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(self.SIZE))
        self.end_headers()
        piece = b"x" * 2**20
        with contextlib.suppress(OSError):
            for _ in range(self.SIZE // len(piece)):
                self.wfile.write(piece)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_large_asset_streams_and_a_latin1_page_is_served(start_proxy: Callable[..., int]
                                                          ) -> None:
    import tracemalloc

    server = running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Large))
    try:
        port = start_proxy(server.server_address[1], rewrite_html=lambda page: page)
        latin = exchange(port, b"GET /latin1.html HTTP/1.1\r\n\r\n")
        assert latin.startswith(b"HTTP/1.0 200 ") and latin.endswith(b"caf\xe9</p>")
        tracemalloc.start()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(f"GET /big HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                received = 0
                while chunk := sock.recv(2**20):
                    received += len(chunk)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert received > Large.SIZE
        assert peak < Large.SIZE // 8, peak  # in pieces, never the whole asset at once
    finally:
        server.shutdown()
        server.server_close()
