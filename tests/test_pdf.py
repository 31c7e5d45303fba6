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

import pytest
from site_support import BuiltSite, build_or_fail

from sitebuild.pdf import EDITION, PARTS
from tracefile import SCHEMAS, load_trace

PAGES = ("index.html", *PARTS)
_TRACED = re.compile(r'<span class="tv" data-trace="[^":]*:([^"]+)"[^>]*>(.*?)</span>', re.S)
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
    done = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True)
    return words(done.stdout)


def printed(fragment: str) -> str:
    """An HTML fragment's text as the edition prints it: each traced value with its record."""
    fragment = _TRACED.sub(lambda span: f"{span.group(2)} {span.group(1)}", fragment)
    return words(html.unescape(re.sub(r"<[^>]+>", "", fragment)))


@pytest.mark.slow
@pytest.mark.browser
def test_the_edition_holds_its_parts_a_traced_number_and_every_caption(
        edition: BuiltSite) -> None:
    text = pdf_text(edition.site / EDITION)
    assert text.startswith("Contents ")
    for title in ("Residual connections", "Gradients through depth",
                  "The residual stream in a small trained decoder", "References"):
        assert title in text, title
    chapter = load_trace(edition.site / "trace" / "residual-connections-v2.trace",
                         SCHEMAS["residual-connections-v2"]).resolve("CONFIG.chapter")
    assert f"Chapter {chapter} CONFIG.chapter of the decoder" in text
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
