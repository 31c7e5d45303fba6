"""The preview's front door: an HTTP proxy on the reader's port in front of MkDocs' own
server, which listens on a private loopback port.

Contract: ``listen(host, port, upstream)`` binds the reader's port (a taken one fails at once,
before anything is built) and returns a ``Proxy`` to run with ``serve_forever``. It answers GET
and HEAD (HEAD without the body) by asking MkDocs' server on ``upstream``, and only for a
request whose Host header names the preview itself, so a page of another site that rebinds its
own name to 127.0.0.1 reads nothing (421). MkDocs writes its own address into what it serves
(the sitemap, canonical links): in text, the proxy puts the reader's address there instead,
and passes each HTML page through ``rewrite_html`` when given (the preview typesets its math).
At most ``MAX_CONNECTIONS`` connections are served at once (the next is answered 503 and
closed); a client that sends nothing for ``IDLE_SECONDS``, or whose request is not whole within
``REQUEST_SECONDS`` however it trickles in, is closed. A path with a control character is a
400; an answer too large to rewrite (``REWRITE_BYTES``), or not text, or an HTML page that is
not UTF-8, is passed on as MkDocs sent it, a large one in pieces, never held whole.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import http.server
import socket
import sys
import threading
from collections.abc import Callable

from sitebuild.errors import BuildError

#: Each open tab holds one connection for MkDocs' live-reload poll, so a few dozen is plenty.
MAX_CONNECTIONS = 32
#: A request's next bytes must arrive within this, or the connection is closed.
IDLE_SECONDS = 15.0
#: The request line and headers must have arrived within this, read by read or not.
REQUEST_SECONDS = 20.0
#: The largest answer rewritten in memory (a page, the sitemap); larger ones stream as sent.
REWRITE_BYTES = 16 * 2**20
#: MkDocs holds a live-reload poll open for up to a minute before it answers.
UPSTREAM_SECONDS = 90.0
#: The answers whose text may name MkDocs' address.
TEXT_TYPES = ("text/", "application/xml", "application/javascript", "application/json")
BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
        b"Connection: close\r\n\r\nThe preview is serving as many connections as it allows.\n")


class Proxy(http.server.ThreadingHTTPServer):
    """A threaded HTTP server with a cap on its threads, forwarding to ``upstream``."""

    daemon_threads = True

    def __init__(self, host: str, port: int, upstream: int,
                 max_connections: int = MAX_CONNECTIONS,
                 idle_seconds: float = IDLE_SECONDS,
                 rewrite_html: Callable[[str], str] | None = None,
                 request_seconds: float = REQUEST_SECONDS) -> None:
        self.upstream, self.idle_seconds = upstream, idle_seconds
        self.request_seconds = request_seconds
        self.rewrite_html = rewrite_html
        self.slots = threading.BoundedSemaphore(max_connections)
        super().__init__((host, port), ForwardHandler)
        port = self.server_address[1]  # the one bound, when asked for any (0)
        self.hosts = {f"{name}:{port}" for name in (host, "localhost", "127.0.0.1")}
        self.addresses = (f"http://127.0.0.1:{upstream}/".encode(),
                          f"http://{host}:{port}/".encode())

    def process_request(self, request: socket.socket, client_address: tuple) -> None:
        if not self.slots.acquire(blocking=False):
            with contextlib.suppress(OSError):  # gone already: nothing to tell it
                request.sendall(BUSY)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def handle_error(self, request: socket.socket, client_address: tuple) -> None:
        if not isinstance(sys.exception(), ConnectionError):  # a reader who left is no error
            super().handle_error(request, client_address)

    def process_request_thread(self, request: socket.socket, client_address: tuple) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class ForwardHandler(http.server.BaseHTTPRequestHandler):
    """One connection: one GET or HEAD, checked, then answered with MkDocs' answer."""

    server: Proxy
    protocol_version = "HTTP/1.0"  # one request per connection, as MkDocs' server answers

    def setup(self) -> None:
        self.timeout = self.server.idle_seconds  # read by StreamRequestHandler.setup
        super().setup()
        self.answered = False  # a status line went out: an error can no longer replace it
        # The idle limit applies per read: a request trickled a line at a time would hold its
        # slot for ever without a deadline for the whole of it.
        self.deadline = threading.Timer(self.server.request_seconds, self._cut)
        self.deadline.daemon = True
        self.deadline.start()

    def _cut(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def parse_request(self) -> bool:
        whole = super().parse_request()  # the request line's words and every header
        self.deadline.cancel()  # then the answer may wait on MkDocs' live-reload poll
        return whole

    def finish(self) -> None:
        self.deadline.cancel()
        super().finish()

    def do_GET(self) -> None:
        self.forward(send_body=True)

    def do_HEAD(self) -> None:
        self.forward(send_body=False)

    def forward(self, send_body: bool) -> None:
        if self.headers.get("Host", "") not in self.server.hosts:
            self.send_error(421, "Misdirected Request",
                            f"This preview answers requests for {min(self.server.hosts)} only")
            return
        if not self.path.startswith("/"):
            self.send_error(400, "Bad Request", "the request names a path, not a URL")
            return
        if any(ord(c) < 32 or ord(c) == 127 for c in self.path):
            self.send_error(400, "Bad Request", "the path holds a control character")
            return
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream,
                                              timeout=UPSTREAM_SECONDS)
        try:
            upstream.request("GET", self.path, headers={
                name: value for name, value in self.headers.items() if name == "Referer"})
            answer = upstream.getresponse()
            self.answer(answer, send_body)
        except (OSError, http.client.HTTPException):
            if not self.answered:
                self.send_error(502, "Bad Gateway", "MkDocs' preview server did not answer")
        finally:
            upstream.close()

    def answer(self, answer: http.client.HTTPResponse, send_body: bool) -> None:
        """MkDocs' ``answer`` to the reader: rewritten when it is text small enough to hold,
        else passed on in pieces as sent."""
        kind = answer.getheader("Content-Type", "")
        declared = answer.getheader("Content-Length") or ""
        length = int(declared) if declared.isdigit() else -1  # none, or not a number: unknown
        content = None
        if (kind.startswith(TEXT_TYPES) and length <= REWRITE_BYTES) or length < 0:
            content = answer.read(REWRITE_BYTES + 1)
            if len(content) > REWRITE_BYTES:
                raise http.client.HTTPException("an answer without a length, too large")
            content = self.rewritten(kind, content)
            length = len(content)
        self.send_response(answer.status, answer.reason)
        for name, value in (("Content-Type", kind), ("Location", answer.getheader("Location"))):
            if value:
                self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.answered = True
        if not send_body:
            return
        if content is not None:
            self.wfile.write(content)
            return
        while piece := answer.read(2**16):
            self.wfile.write(piece)

    def rewritten(self, kind: str, content: bytes) -> bytes:
        """Text with the reader's address for MkDocs' own, an HTML page through
        ``rewrite_html``; a page that is not UTF-8 is left as it is."""
        if kind.startswith(TEXT_TYPES):
            content = content.replace(*self.server.addresses)
        if kind.startswith("text/html") and self.server.rewrite_html:
            # A page that is not UTF-8 is not ours to typeset: shown as MkDocs serves it.
            with contextlib.suppress(UnicodeDecodeError):
                content = self.server.rewrite_html(content.decode("utf-8")).encode("utf-8")
        return content

    def log_message(self, format: str, *args: object) -> None:
        """Silent: MkDocs logs what it serves."""


def listen(host: str, port: int, upstream: int,
           rewrite_html: Callable[[str], str] | None = None) -> Proxy:
    """The proxy bound to ``host:port``, or a BuildError saying why it cannot be."""
    try:
        return Proxy(host, port, upstream, rewrite_html=rewrite_html)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise BuildError("serve", f"port {port} is already in use (try --port N)") from None
        raise BuildError("serve", f"cannot listen on {host}:{port}: {err.strerror}") from None


def free_port(host: str) -> int:
    """A port no one listens on now, for MkDocs' private server."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]
