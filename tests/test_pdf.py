"""Tests for the PDF edition (sitebuild/pdf.py, ``build_site.py build --pdf``), read back the way
a reader's viewer reads it: poppler's ``pdftotext`` and ``pdffonts``.

One build with ``--pdf`` per module. Its PDF must hold the contents, each part's title, a
traced number as the site shows it, the caption of every numbered figure and table of the
chapter and both labs (a traced value in a caption is followed by its record, as everywhere
in print), and only embedded fonts with no replacement characters; every page links to it.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from site_support import BuiltSite, build_or_fail

from sitebuild.pdf import EDITION, PARTS
from tracefile import SCHEMAS, load_trace

PAGES = ("index.html", *PARTS)
_CAPTION = re.compile(r"<(figcaption|caption)(?: [^>]*)?>(.*?)</\1>", re.S)


@pytest.fixture(scope="module")
def edition(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    base = tmp_path_factory.mktemp("pdf-build")
    return build_or_fail(base / "site", base / "build", extra=("--pdf",))


def words(text: str) -> str:
    return " ".join(text.split())


def squashed(text: str) -> str:
    return re.sub(r"[\s-]+", "", text)


def pdf_text(pdf: Path) -> str:
    """The edition's words in the order they were printed (``-raw``): a caption stays whole
    even where a smaller chart beside it makes poppler's reading order interleave them."""
    done = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True,
                          check=True)
    return words(done.stdout)


def printed(fragment: str) -> str:
    """An HTML fragment's text as the edition prints it."""
    return words(html.unescape(re.sub(r"<[^>]+>", "", fragment)))


@pytest.mark.slow
@pytest.mark.browser
def test_the_edition_holds_its_parts_a_traced_number_and_every_caption(
        edition: BuiltSite) -> None:
    text = pdf_text(edition.site / EDITION)
    # The contents, which say once where each number comes from, and on every page the running
    # head and the page number (printed after the page's body).
    assert text.startswith("Contents Every number in this edition was computed by the "
                           "chapter's engine")
    pages = int(re.search(r"Residual connections 1 / (\d+)", text)[1])
    assert all(f"Residual connections {n} / {pages}" in text for n in range(1, pages + 1))
    for title in ("Residual connections", "Gradients through depth",
                  "The residual stream in a small trained decoder", "References"):
        assert title in text, title
    chapter = load_trace(edition.site / "trace" / "residual-connections-v2.trace",
                         SCHEMAS["residual-connections-v2"]).resolve("CONFIG.chapter")
    assert f"Chapter {chapter} of the decoder" in text  # a number, no trace label after it
    # Nothing a page says for a screen: hover, tap, sliders, downloads.
    for screen in ("Hover", "hover", "Move the sliders", ".ipynb", "The plotted values"):
        assert screen not in text, screen
    # Every numbered element's caption (a phone-width variant prints not at all), compared
    # without spaces and hyphens: a line may break at a hyphen, which pdftotext then drops.
    captions = [printed(found.group(2)) for page in PAGES
                for found in _CAPTION.finditer((edition.site / page).read_text())
                if 'class="element-number"' in found.group(2)]
    assert len(captions) > 20
    missing = [caption for caption in captions if squashed(caption) not in squashed(text)]
    assert not missing, missing[:3]


@pytest.mark.slow
@pytest.mark.browser
def test_the_contents_give_each_heading_its_page(edition: BuiltSite) -> None:
    done = subprocess.run(["pdftotext", "-layout", str(edition.site / EDITION), "-"],
                          capture_output=True, text=True, check=True)
    pages = done.stdout.split("\f")
    # The contents sit in two columns on the first page: a line holds one entry or two.
    entries = re.findall(r"(\S+(?: \S+)*) {2,}(\d+)(?= {2,}|$)", pages[0], re.M)
    assert len(entries) > 30, entries[:5]  # an entry too long for one line is not read
    for title, number in entries:
        lines = [line.strip() for line in pages[int(number) - 1].splitlines()]
        # A long entry or heading wraps in its own place: the first of its lines is enough.
        assert any(line.startswith(title) or (len(line) > 12 and title.startswith(line))
                   for line in lines), (title, number)


#: The most of a page's height left blank under its last line, but where a part or the
#: references begin on the next page: less than half a page (charts print at most about a
#: third of a page tall, and a printed fold may run on to the next page).
MOST_BLANK = 0.45


def blank_below(page: Path) -> float:
    """The share of a page's height, between its running title and its page number, left blank
    under its last line; ``page`` is the page drawn in grey as a binary PGM (``pdftoppm``)."""
    data = page.read_bytes()
    kind, width, height, _, pixels = data.split(maxsplit=4)
    assert kind == b"P5"
    width, height = int(width), int(height)
    rows = [min(pixels[y * width:(y + 1) * width]) < 200
            for y in range(int(height * 0.06), int(height * 0.93))]
    last = max((y for y, inked in enumerate(rows) if inked), default=0)
    return 1 - (last + 1) / len(rows)


@pytest.mark.slow
@pytest.mark.browser
def test_no_page_is_left_mostly_blank(edition: BuiltSite, tmp_path: Path) -> None:
    pdf = edition.site / EDITION
    subprocess.run(["pdftoppm", "-r", "20", "-gray", str(pdf), str(tmp_path / "p")],
                   check=True, timeout=120)
    texts = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout.split("\f")
    starts = ("References", "Gradients through depth", "The residual stream in a small",
              "Answers to the exercises")
    pages = sorted(tmp_path.glob("p-*.pgm"))
    assert len(pages) == len(texts) - 1 > 50
    blank = []
    for at, page in enumerate(pages[1:-1], 1):  # the contents end as they end
        following = [row for row in texts[at + 1].splitlines() if row.strip()][1:2]
        if not following or not following[0].startswith(starts):
            share = blank_below(page)
            if share > MOST_BLANK:
                blank.append((at + 1, round(share, 2)))
    assert blank == [], blank


@pytest.mark.slow
@pytest.mark.browser
def test_the_parts_keep_their_drawings_and_print_their_folds_open(browser: Any,
                                                                   built_site: Path) -> None:
    from site_support import serve

    from sitebuild.pdf import ASSEMBLE

    with serve(built_site) as url:
        tab = browser.new_page()
        tab.goto(url + "index.html")
        tab.evaluate(ASSEMBLE, [list(PARTS), ""])
        # Every marker and clip path a drawing refers to is still there, in every part.
        dangling = tab.evaluate("""() => [...document.querySelectorAll("article svg use")]
            .map(use => use.getAttribute("xlink:href") || use.getAttribute("href"))
            .concat([...document.querySelectorAll("article svg [clip-path]")]
                .map(el => el.getAttribute("clip-path").slice(4, -1)))
            .filter(ref => !document.getElementById(ref.slice(1)))""")
        assert tab.evaluate("document.querySelectorAll('.edition-part svg use').length") > 100
        assert dangling == []
        # No fold is left closed, nothing for a screen is left, and the verdicts' rules print.
        left = "document.querySelectorAll('article details, .screen-only').length"
        assert tab.evaluate(left) == 0
        assert "The rules that decide the verdicts" in tab.evaluate(
            "document.querySelector('.edition-part').textContent")
        # The exercises' answers sit in an appendix at the end, each named by its exercise,
        # and each exercise points to its answer there.
        answers = tab.evaluate("""() => {
            const appendix = document.querySelector(".edition-answers");
            return {last: appendix === appendix.parentElement.lastElementChild,
                    titles: [...appendix.querySelectorAll(".success > .admonition-title")]
                        .map((title) => title.textContent),
                    left: document.querySelectorAll(".question .success").length,
                    pointers: [...document.querySelectorAll(
                        ".question a[href^='#edition-answer-']")]
                        .map((link) => link.getAttribute("href")),
                    ids: [...appendix.querySelectorAll(".success")].map((box) => box.id)}}""")
        assert answers["last"] and answers["left"] == 0
        assert answers["titles"][0] == "Prune one block and predict the loss"
        assert answers["pointers"] == ["#" + id for id in answers["ids"]] != []
        tab.close()


@pytest.mark.slow
@pytest.mark.browser
def test_the_edition_embeds_every_font_and_lacks_no_glyph(edition: BuiltSite) -> None:
    pdf = edition.site / EDITION
    done = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True)
    fonts = done.stdout.splitlines()[2:]
    assert fonts and all(row.split()[-5] == "yes" for row in fonts), done.stdout  # "emb"
    assert "\ufffd" not in pdf_text(pdf)


@pytest.mark.slow
@pytest.mark.browser
def test_every_page_links_to_the_edition(edition: BuiltSite) -> None:
    pages = sorted(edition.site.rglob("*.html"))
    assert len(pages) >= 5
    for page in pages:
        if page.name == "404.html":
            continue
        found = re.search(r'<p class="edition-link"><a href="([^"]+)">', page.read_text())
        assert found, page
        assert (page.parent / found.group(1)).resolve() == (edition.site / EDITION).resolve()


@pytest.mark.browser
def test_a_page_script_that_never_returns_stops_the_print_with_a_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from process_support import children

    from sitebuild import pdf
    from sitebuild.errors import BuildError

    (tmp_path / "index.html").write_text(
        "<article><h1 id='a'>A</h1></article><script>addEventListener('load', () => "
        "setTimeout(() => { for (;;) {} }, 50));</script>")
    monkeypatch.setattr(pdf, "PRINT_SECONDS", 8)
    before, start = set(children(os.getpid())), time.monotonic()  # a worker's own browser
    with pytest.raises(BuildError, match=r"^pdf: printing the edition took longer than 8 s"):
        pdf.print_edition(tmp_path)
    assert time.monotonic() - start < 30
    assert set(children(os.getpid())) <= before, "a browser process outlived the print"


@pytest.mark.slow
@pytest.mark.browser
def test_the_editions_links_lead_into_it_or_out_to_the_web(edition: BuiltSite) -> None:
    # Built without an address: a link to a page outside the edition is printed as text, and
    # nothing points at the printing server, which is gone once the PDF is written.
    data = (edition.site / EDITION).read_bytes()
    assert b"127.0.0.1" not in data and b"localhost" not in data
    addresses = re.findall(rb"/URI \(([^)]*)\)", data)
    assert addresses and all(a.startswith((b"https://", b"http://")) for a in addresses)
    assert data.count(b"/S /GoTo") + data.count(b"/Dest") > 50  # the contents, the folds' links


@pytest.mark.slow
@pytest.mark.browser
def test_check_reprints_the_edition_and_finds_a_forged_one(edition: BuiltSite,
                                                         tmp_path: Path) -> None:
    from test_gates_published import check

    from sitebuild.gates.rebuilt import compare_sites

    untouched = check("--site", str(edition.site))
    assert untouched.returncode == 0, untouched.stdout + untouched.stderr  # reprinted, equal
    assert "[check] pdf " in untouched.stdout
    # The comparison check makes, without a third print: a forged edition is a finding.
    site = Path(shutil.copytree(edition.site, tmp_path / "site"))
    pdf = site / EDITION
    pdf.write_bytes(pdf.read_bytes().replace(b"/Title (", b"/Title (Forged ", 1))
    [found] = compare_sites(site, edition.site)
    assert (found.page, found.gate) == (EDITION, "rebuilt") and "differs" in found.message


@pytest.mark.browser
def test_a_browser_that_cannot_start_is_one_short_line(tmp_path: Path) -> None:
    # In a process of its own, as the build prints: a worker's own browser runs an event loop
    # that Playwright's synchronous calls refuse to share.
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\necho \"cannot open display: $(printf 'x%.0s' $(seq 1 4000))\" "
                      ">&2\nexit 1\n")
    broken.chmod(0o755)
    (tmp_path / "index.html").write_text("<article><h1 id='a'>A</h1></article>")
    script = ("import sys; from pathlib import Path; from sitebuild import pdf; "
              f"pdf.CHROMIUM = Path({str(broken)!r}); "
              "from sitebuild.errors import BuildError\n"
              f"try: pdf._print(Path({str(tmp_path)!r}), '')\n"
              "except BuildError as error: print(error)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    message = done.stdout.strip()
    assert message.startswith(f"pdf: Chromium ({broken}) did not start: cannot open display: x")
    assert len(message) <= len(f"pdf: Chromium ({broken}) did not start: ") + 200
    assert "\n" not in message and "--disable" not in message  # not the command line
