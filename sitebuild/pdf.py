"""The PDF edition: the chapter and both labs in one document, printed by Chromium from the
built site.

Contract: ``print_edition(site_dir)`` serves ``site_dir`` on a private loopback port, opens the
chapter in headless Chromium (Debian's, through Playwright, as the browser tests do), appends
each lab's article after it as a part of its own (its ids, but a drawing's, prefixed, so links
stay inside the part; the build typeset their math), puts a table of contents first, and
prints the whole to ``site_dir/EDITION``: A4, the title atop and the page number below every
page, the headings as the PDF's outline, each entry of the contents with its heading's page
(read by poppler's ``pdfinfo`` from a first printing). It is a printed chapter: the contents
say once where each number's provenance lives; what is for a screen (``.screen-only``: hover,
tap, downloads) is left out, as are a chart's values and the listings in folds; every
other fold (unless a listing was all it held) is printed open as a boxed section, and the
exercises' answers in an appendix at the end. A missing Playwright, Chromium or pdfinfo, or
a page that does not load, is a ``BuildError``. The printing runs in a child process of its
own session, ended with every browser process it started when it takes longer than
``PRINT_SECONDS``: a page script that never returns cannot hang the build.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sitebuild.errors import BuildError, last_line
from sitebuild.processes import child_command, run_limited

EDITION = "residual-connections.pdf"
#: How long printing may take (on two cores it takes well under a minute).
PRINT_SECONDS = 300
#: Chromium's printing date in UTC, and its names of structure-tree nodes: both of fixed width.
_PDF_DATE = re.compile(rb"\(D:\d{14}\+00'00'\)")
_NODE = re.compile(rb"node\d{8}")
#: A line of ``pdfinfo -dests``: the page, the destination's box, its name.
_DESTINATION = re.compile(r'^\s*(\d+) \[[^\]]*\] "(.+)"$', re.M)
#: How many times the edition may be printed before its contents' page numbers settle.
PRINTINGS = 3
#: A browser's line on stderr, as Playwright's launch error quotes it.
_BROWSER_ERROR = re.compile(r"\[pid=\d+\]\[err\] (.+)")
PARTS = ("labs/gradient-flow.html", "labs/residual-stream.html")  # after the chapter
CHROMIUM = Path("/usr/bin/chromium")
HEADER = ('<div style="width:100%;font-size:8px;text-align:center;color:#555">'
          '<span class="title"></span></div>')
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
    // A drawing's ids are its own already (each plot's are prefixed by its name), and its
    // markers and clip paths refer to them: prefixed, the references would break.
    article.querySelectorAll("[id]").forEach((el) => {
      if (!el.closest("svg")) el.id = prefix + el.id;
    });
    section.append(...article.childNodes);
    main.append(section);
  }
  // An exercise's answer goes to an appendix of answers at the end, as a printed book keeps
  // them: the exercise says where it is, and the answer names its exercise.
  const answered = [...main.querySelectorAll("details.question")]
    .filter((question) => question.querySelector("details.success"));
  if (answered.length) {
    const appendix = document.createElement("section");
    appendix.className = "edition-answers";
    const heading = document.createElement("h1");
    heading.id = "edition-answers";
    heading.textContent = "Answers to the exercises";
    appendix.append(heading);
    answered.forEach((question, at) => {
      const answer = question.querySelector("details.success");
      const id = "edition-answer-" + (at + 1);
      const pointer = document.createElement("p");
      const link = document.createElement("a");
      link.href = "#" + id;
      link.textContent = "Its answer is in the appendix";
      pointer.append(link, ".");
      answer.replaceWith(pointer);
      const box = document.createElement("details");
      box.className = answer.className;
      box.id = id;
      const summary = document.createElement("summary");
      summary.textContent = question.querySelector(":scope > summary").textContent.trim();
      answer.querySelector(":scope > summary")?.remove();
      box.append(summary, ...answer.childNodes);
      appendix.append(box);
    });
    main.append(appendix);
  }
  // Paper has no hover, tap or download: what says so goes, and so do a chart's values and
  // the listings in folds (the web edition has them), with any fold they leave empty; every
  // other fold is printed open, as the boxed section it is.
  main.querySelectorAll(".screen-only, details.chart-values").forEach((el) => el.remove());
  main.querySelectorAll("details").forEach((fold) => {
    fold.querySelectorAll(".highlight, pre").forEach((listing) => listing.remove());
    const kept = [...fold.children].filter((part) => part.tagName !== "SUMMARY");
    if (fold.querySelector(".notebook-link") || !kept.some((part) => part.textContent.trim())) {
      fold.remove();
      return;
    }
    const box = document.createElement("div");
    box.className = "admonition " + fold.className;
    if (fold.id) box.id = fold.id;
    const title = document.createElement("p");
    title.className = "admonition-title";
    const summary = fold.querySelector(":scope > summary");
    title.append(...(summary ? summary.childNodes : []));
    if (summary) summary.remove();
    box.append(title, ...fold.childNodes);
    fold.replaceWith(box);
  });
  // A heading left with nothing under it (its listings gone) goes too.
  [...main.querySelectorAll("h2, h3, h4")].reverse().forEach((h) => {
    const next = h.nextElementSibling;
    if (!next || (/^H[1-6]$/.test(next.tagName) && next.tagName <= h.tagName)) h.remove();
  });
  document.title = main.querySelector("h1").textContent.replace(/\u00b6$/, "").trim();
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
  const note = document.createElement("p");
  note.className = "edition-note";
  note.textContent = "Every number in this edition was computed by the chapter's engine and " +
    "read from the trace it wrote; none was typed by hand. The web edition shows, for each " +
    "number, the trace record it came from and its exact stored value, and holds the code " +
    "listings, the notebooks and every chart's plotted values.";
  toc.append(heading, note, list);
  main.prepend(toc);
}"""


# Runs in the assembled edition: each entry of the contents gets the page its heading is on.
NUMBER_CONTENTS = """(pages) => document.querySelectorAll(".edition-toc li").forEach((item) => {
  item.querySelector(".edition-page")?.remove();
  const page = pages[item.querySelector("a").getAttribute("href").slice(1)];
  if (page === undefined) return;
  const number = document.createElement("span");
  number.className = "edition-page";
  number.textContent = page;
  item.append(number);
})"""


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
            # The contents get their page numbers from a first printing; a numbered contents
            # that moved a heading to another page is numbered and printed again.
            pages: dict[str, int] = {}
            for _ in range(PRINTINGS):
                page.evaluate(NUMBER_CONTENTS, pages)
                page.pdf(path=str(target), format="A4", print_background=True, outline=True,
                         tagged=True, display_header_footer=True, header_template=HEADER,
                         footer_template=FOOTER, margin={"top": "16mm", "bottom": "18mm",
                                                         "left": "16mm", "right": "16mm"})
                if pages == (pages := _destination_pages(target)):
                    break
            else:
                raise BuildError("pdf", f"the contents' page numbers did not settle in "
                                 f"{PRINTINGS} printings")
        except Error as err:
            raise BuildError("pdf", f"Chromium could not print the edition: "
                             f"{' '.join(str(err).split())[:300]}") from None
        finally:
            browser.close()
    target.write_bytes(_reproducible(target.read_bytes()))
    return target


def _destination_pages(pdf: Path) -> dict[str, int]:
    """The page of every named destination of ``pdf`` (each heading a link leads to), as
    poppler's ``pdfinfo -dests`` lists them."""
    if shutil.which("pdfinfo") is None:
        raise BuildError("pdf", "the PDF edition needs poppler's pdfinfo: ./dev setup")
    done = run_limited(["pdfinfo", "-dests", str(pdf)], PRINT_SECONDS, "pdfinfo",
                       capture_output=True, encoding="utf-8", errors="replace")
    if done.returncode != 0:
        raise BuildError("pdf", f"pdfinfo could not read the edition: {last_line(done.stderr)}")
    return {found[2]: int(found[1]) for found in _DESTINATION.finditer(done.stdout)}


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
