"""The preview's HTTP server: the site MkDocs last built, served from its folder, with live
reload. There is no other server behind it, so nothing but this one can be reached.

Contract: ``listen(host, port, rewrite_html)`` binds the reader's port (a taken one fails at
once, before anything is built) and returns a ``PreviewServer``; ``show(folder)`` makes a newly
built site the one served (first before ``serve_forever``) and tells every open page to reload.
It answers GET and HEAD (HEAD without the body), and only a request whose Host header names the
preview itself, so a page of another site that rebinds its own name to 127.0.0.1 reads nothing
(421). Files are served as the standard library's file server serves them (never a file outside
the site's folder, no folder listings); each HTML page passes through ``rewrite_html`` (the
preview typesets its math) and gets a script that asks ``RELOAD_PATH`` whether a newer site is
up, an answer held until one is or ``RELOAD_SECONDS`` pass. At most ``MAX_CONNECTIONS``
connections are served at once (the next is answered 503 and closed); a client that sends
nothing for ``IDLE_SECONDS``, or whose request is not whole within ``REQUEST_SECONDS`` however it
trickles in, is closed. A path with a control character is a 400; a page larger than
``REWRITE_BYTES`` or not UTF-8 is served as it is, and any file goes out in pieces.
"""

from __future__ import annotations

import contextlib
import errno
import http.server
import io
import os
import secrets
import socket
import sys
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from sitebuild.errors import BuildError

#: Each open tab holds one connection for its live-reload question, so a few dozen is plenty.
MAX_CONNECTIONS = 32
#: A request's next bytes must arrive within this, or the connection is closed.
IDLE_SECONDS = 15.0
#: The request line and headers must have arrived within this, read by read or not.
REQUEST_SECONDS = 20.0
#: The largest page rewritten in memory; a larger one is served as built.
REWRITE_BYTES = 16 * 2**20
#: The live-reload question, and how long its answer waits for a newer site.
RELOAD_PATH = "/.preview-reload"
RELOAD_SECONDS = 30.0
#: Asks whether a newer site than this page's is up, and reloads when one is; a failed
#: question (the preview restarting) is asked again a second later.
RELOAD_SCRIPT = """<script>(function ask(seen) {
  fetch("%s?seen=" + seen).then(function (answer) { return answer.text(); }).then(
    function (now) { if (now !== seen) location.reload(); else ask(seen); },
    function () { setTimeout(function () { ask(seen); }, 1000); });
})("%s");</script>"""
BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
        b"Connection: close\r\n\r\nThe preview is serving as many connections as it allows.\n")


class PreviewServer(http.server.ThreadingHTTPServer):
    """A threaded HTTP server with a cap on its threads, serving the site last ``show``n."""

    daemon_threads = True

    def __init__(self, host: str, port: int, max_connections: int = MAX_CONNECTIONS,
                 idle_seconds: float = IDLE_SECONDS,
                 rewrite_html: Callable[[str], str] | None = None,
                 request_seconds: float = REQUEST_SECONDS) -> None:
        self.idle_seconds, self.request_seconds = idle_seconds, request_seconds
        self.rewrite_html = rewrite_html
        self.slots = threading.BoundedSemaphore(max_connections)
        self.site = Path(os.devnull)  # ``show`` a site before ``serve_forever``
        self.shown_count = 0  # how many sites have been shown
        # A tab left open from an earlier preview asks about that one's version: never this.
        self.run = secrets.token_hex(4)
        self.shown = threading.Condition()
        super().__init__((host, port), PreviewHandler)
        port = self.server_address[1]  # the one bound, when asked for any (0)
        names = (host, "localhost", "127.0.0.1")
        # A browser leaves the default port out of the Host it sends.
        self.hosts = {f"{name}:{port}" for name in names} | (set(names) if port == 80 else set())

    @property
    def version(self) -> str:
        """Which site is shown, as a page asks about it: this run's and its count."""
        return f"{self.run}-{self.shown_count}"

    def show(self, site: Path) -> None:
        """Serve ``site`` from now on, and wake every page waiting to reload."""
        with self.shown:
            self.site = site
            self.shown_count += 1
            self.shown.notify_all()

    def process_request(self, request: socket.socket, client_address: tuple) -> None:
        if not self.slots.acquire(blocking=False):
            with contextlib.suppress(OSError):  # gone already: nothing to tell it
                request.sendall(BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: nothing else will give the slot back
            self.slots.release()
            raise

    def handle_error(self, request: socket.socket, client_address: tuple) -> None:
        if not isinstance(sys.exception(), ConnectionError):  # a reader who left is no error
            super().handle_error(request, client_address)

    def process_request_thread(self, request: socket.socket, client_address: tuple) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class PreviewHandler(http.server.SimpleHTTPRequestHandler):
    """One connection: one GET or HEAD, checked, then answered from the site's folder."""

    server: PreviewServer
    protocol_version = "HTTP/1.0"  # one request per connection

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, directory=os.devnull, **kwargs)  # type: ignore[arg-type]

    def setup(self) -> None:
        self.timeout = self.server.idle_seconds  # read by StreamRequestHandler.setup
        super().setup()
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
        self.deadline.cancel()  # then the answer may wait for a newer site
        return whole

    def finish(self) -> None:
        self.deadline.cancel()
        super().finish()

    def send_head(self) -> io.BufferedIOBase | None:
        """The checks, then the live-reload answer or the file (the standard library's
        answer, an HTML page rewritten)."""
        if self.headers.get("Host", "") not in self.server.hosts:
            self.send_error(421, "Misdirected Request",
                            f"This preview answers requests for {min(self.server.hosts)} only")
            return None
        if any(ord(c) < 32 or ord(c) == 127 for c in urllib.parse.unquote(self.path)):
            self.send_error(400, "Bad Request", "the path holds a control character")
            return None
        if urllib.parse.urlsplit(self.path).path == RELOAD_PATH:
            return self.reload_answer()
        with self.server.shown:
            self.directory, version = os.fspath(self.server.site), self.server.version
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.split("?")[0].endswith("/"):
            path = os.path.join(path, "index.html")
        if not path.endswith(".html") or not os.path.isfile(path) \
                or os.path.getsize(path) > REWRITE_BYTES:
            return super().send_head()  # assets, redirects, errors: as the library answers
        content = Path(path).read_bytes()
        with contextlib.suppress(UnicodeDecodeError):  # not UTF-8: not ours to rewrite
            page = content.decode("utf-8")
            if self.server.rewrite_html:
                page = self.server.rewrite_html(page)
            content = _reloading(page, version).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        return io.BytesIO(content)

    def reload_answer(self) -> io.BytesIO:
        """The version of the site up now, once it is newer than the one asked about (or
        ``RELOAD_SECONDS`` have passed)."""
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        seen = query.get("seen", [""])[0]
        with self.server.shown:
            self.server.shown.wait_for(lambda: self.server.version != seen,
                                       timeout=RELOAD_SECONDS)
            content = self.server.version.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        return io.BytesIO(content)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None
                   ) -> None:
        """The site's own page for a file not found, as the published site shows it (and,
        like every page, reloading when a newer site is up: the page may be on its way)."""
        missing = Path(self.directory, "404.html")
        if code != 404 or not missing.is_file():
            super().send_error(code, message, explain)
            return
        with self.server.shown:
            version = self.server.version
        content = _reloading(missing.read_text(encoding="utf-8", errors="replace"),
                             version).encode("utf-8")
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(content)

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """No listings: a folder without an index page is not found."""
        self.send_error(404, "File not found")

    def log_message(self, format: str, *args: object) -> None:
        """Silent: a preview's reader sees what it serves."""


def _reloading(page: str, version: str) -> str:
    """``page`` with the script that reloads it once a site newer than ``version`` is up."""
    return page.replace("</body>", RELOAD_SCRIPT % (RELOAD_PATH, version) + "</body>", 1)


def listen(host: str, port: int, rewrite_html: Callable[[str], str] | None = None
           ) -> PreviewServer:
    """The server bound to ``host:port``, or a BuildError saying why it cannot be."""
    try:
        return PreviewServer(host, port, rewrite_html=rewrite_html)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise BuildError("serve", f"port {port} is already in use (try --port N)") from None
        raise BuildError("serve", f"cannot listen on {host}:{port}: {err.strerror}") from None
