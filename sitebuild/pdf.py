"""The PDF edition: the chapter and both labs in one document, printed by Chromium from the
built site.

Contract: ``print_edition(site_dir)`` serves ``site_dir`` on a private loopback port, opens the
chapter in headless Chromium (Debian's, through Playwright, as the browser tests do), appends
each lab's article after it as a part of its own (its ids prefixed, so links stay inside the
part; the build typeset their math), puts a table of contents first, and
prints the whole to ``site_dir/EDITION``: A4, page numbers in the footer, the headings as the
PDF's outline, each traced value followed by its record (``@media print`` in extra.css). A
missing Playwright or Chromium, or a page that does not load, is a ``BuildError``. The printing
runs in a child process of its own session, ended with every browser process it started when it
takes longer than ``PRINT_SECONDS``: a page script that never returns cannot hang the build.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sitebuild.errors import BuildError, last_line
from sitebuild.processes import child_command

EDITION = "residual-connections.pdf"
#: How long printing may take (on two cores it takes well under a minute).
PRINT_SECONDS = 300
#: Chromium's printing date in UTC, and its names of structure-tree nodes: both of fixed width.
_PDF_DATE = re.compile(rb"\(D:\d{14}\+00'00'\)")
_NODE = re.compile(rb"node\d{8}")
#: A browser's line on stderr, as Playwright's launch error quotes it.
_BROWSER_ERROR = re.compile(r"\[pid=\d+\]\[err\] (.+)")
PARTS = ("labs/gradient-flow.html", "labs/residual-stream.html")  # after the chapter
CHROMIUM = Path("/usr/bin/chromium")
FOOTER = ('<div style="width:100%;font-size:8px;text-align:center;color:#555">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')
# Runs in the chapter's page: the parts appended, the table of contents put first.
ASSEMBLE = """async ([parts, site]) => {
  const main = document.querySelector("article");
  const root = new URL("./", location.href).href;
  const inEdition = new Map([[root, ""], [root + "index.html", ""]]);
  parts.forEach((part, at) => inEdition.set(root + part, "part" + (at + 1) + "-"));
  // Every link as the edition can follow it: into the edition by an anchor, to the site's
  // address for any other page of the site (or printed as text without an address), and
  // outside the site as written. The printing server's own address never reaches the PDF.
  const relink = (scope, page) => scope.querySelectorAll("a[href]").forEach((el) => {
    const target = new URL(el.getAttribute("href"), page);
    const path = target.href.split("#")[0];
    if (!target.href.startsWith(root)) return;
    if (inEdition.has(path)) {
      const id = target.hash ? decodeURIComponent(target.hash.slice(1)) : "edition-top";
      el.setAttribute("href", "#" + inEdition.get(path) + id);
    } else if (site) {
      el.setAttribute("href", site + target.href.slice(root.length));
    } else {
      el.removeAttribute("href");
    }
  });
  relink(main, location.href);
  main.id = "edition-top";
  for (const [at, part] of parts.entries()) {
    const html = await (await fetch(root + part)).text();
    const article = new DOMParser().parseFromString(html, "text/html").querySelector("article");
    relink(article, root + part);
    const section = document.createElement("section");
    section.className = "edition-part";
    const prefix = "part" + (at + 1) + "-";
    section.id = prefix + "edition-top";
    article.querySelectorAll("[id]").forEach((el) => { el.id = prefix + el.id; });
    section.append(...article.childNodes);
    main.append(section);
  }
  document.querySelectorAll("article .tv[data-trace]").forEach((el) => {
    el.dataset.record = el.dataset.trace.split(":").pop();
  });
  const toc = document.createElement("nav");
  toc.className = "edition-toc";
  const heading = document.createElement("h2");
  heading.textContent = "Contents";
  const list = document.createElement("ul");
  main.querySelectorAll("h1[id], h2[id]").forEach((h) => {
    const item = document.createElement("li");
    item.className = h.tagName === "H1" ? "edition-toc-part" : "";
    const link = document.createElement("a");
    link.href = "#" + h.id;
    link.textContent = h.textContent.replace(/\\u00b6$/, "").trim();
    item.append(link);
    list.append(item);
  });
  toc.append(heading, list);
  main.prepend(toc);
}"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Silent: the build prints its own progress."""


@contextmanager
def _served(site_dir: Path) -> Iterator[str]:
    """``site_dir`` over HTTP on a free loopback port, for as long as the block runs."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def print_edition(site_dir: Path, site_url: str | None = None) -> Path:
    """Print the edition into ``site_dir`` in a child process (see the module doc); its path.
    Links to pages of the site outside the edition point into ``site_url`` (the site's
    address); without one they are printed as plain text."""
    # In UTC, so the printing date is written in one form (``_reproducible``).
    proc = subprocess.Popen(child_command(__name__, [str(site_dir), site_url or ""]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8",
                            errors="replace", start_new_session=True,
                            env={**os.environ, "TZ": "UTC"})
    try:
        _, said = proc.communicate(timeout=PRINT_SECONDS)
    except subprocess.TimeoutExpired:
        raise BuildError("pdf", f"printing the edition took longer than {PRINT_SECONDS} s "
                         "(a page script that never returns?); stopped") from None
    finally:
        if proc.poll() is None:  # timed out, or the build was interrupted
            os.killpg(proc.pid, signal.SIGKILL)  # the printer and every browser it started
            proc.wait()
    if proc.returncode != 0:
        raise BuildError("pdf", last_line(said).removeprefix("pdf: "))
    return site_dir / EDITION


def _print(site_dir: Path, site_url: str) -> Path:
    """Print the edition into ``site_dir``, in this process; its path."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise BuildError("pdf", "the PDF edition needs Playwright: ./dev setup") from None
    if not CHROMIUM.exists():
        raise BuildError("pdf", f"the PDF edition needs {CHROMIUM}: ./dev setup")
    target = site_dir / EDITION
    with _served(site_dir) as url, sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=["--no-sandbox"])
        except Error as err:
            # Playwright's message holds the whole command line and log: the browser's first
            # line on stderr says why, else its own first line.
            found = _BROWSER_ERROR.search(str(err))
            said = found.group(1) if found else (str(err).strip() or "no reason").splitlines()[0]
            raise BuildError("pdf", f"Chromium ({CHROMIUM}) did not start: "
                             f"{' '.join(said.split())[:200]}") from None
        try:
            page = browser.new_page()
            page.goto(url + "index.html", wait_until="networkidle")
            site = site_url.rstrip("/") + "/" if site_url else ""
            page.evaluate(ASSEMBLE, [list(PARTS), site])
            page.pdf(path=str(target), format="A4", print_background=True, outline=True,
                     tagged=True, display_header_footer=True, header_template="<span></span>",
                     footer_template=FOOTER,
                     margin={"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"})
        except Error as err:
            raise BuildError("pdf", f"Chromium could not print the edition: "
                             f"{' '.join(str(err).split())[:300]}") from None
        finally:
            browser.close()
    target.write_bytes(_reproducible(target.read_bytes()))
    return target


def _reproducible(data: bytes) -> bytes:
    """The printed PDF as the same commit prints it anywhere, bytes of equal length replaced
    so its cross-reference offsets hold: the printing date becomes the last commit's
    (``SOURCE_DATE_EPOCH``, which the build sets), and the structure tree's node names, which
    Chromium numbers by every DOM node it has made so far, are numbered by first use."""
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    date = time.strftime("(D:%Y%m%d%H%M%S+00'00')", time.gmtime(epoch)).encode()
    data = _PDF_DATE.sub(date, data)
    numbers: dict[bytes, bytes] = {}
    return _NODE.sub(lambda m: numbers.setdefault(m[0], b"node%08d" % len(numbers)), data)


if __name__ == "__main__":
    try:
        _print(Path(sys.argv[1]), sys.argv[2])
    except BuildError as error:
        print(error, file=sys.stderr)
        sys.exit(1)
