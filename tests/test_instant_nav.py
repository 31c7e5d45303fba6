"""Material's instant navigation really works on a site built for its address (`--site-url`).

Instant navigation fetches the next page and swaps it in without a reload, but only for
links listed in sitemap.xml, which MkDocs fills only when `site_url` is set; Material
matches those entries on path and port. So the site is opened at exactly `site_url`:
Playwright answers every request to it from the built folder (no server, no port to
share), and any other request is recorded and aborted. A JavaScript global set before the
click survives only when the page was not reloaded. A second test empties the sitemap
and sees the global lost, so the check can fail. Uses Debian's Chromium through
tests/browser_support.py: skipped where it cannot run, failed under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from browser_support import DESKTOP
from paths import SITE_URL

EMPTY_SITEMAP = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset></urlset>\n'
# Material rewrites hrefs to absolute URLs once its script runs: match the end only.
NAV_LINK = 'nav.md-nav--primary a.md-nav__link[href$="trace.html"]'




@contextmanager
def opened(browser: Any, site: Path, sitemap: str | None = None) -> Iterator[tuple[Any, list]]:
    """The site's index page at ``SITE_URL``, answered from ``site``; yields (page, external)."""
    context = browser.new_context(viewport=DESKTOP, service_workers="block")
    context.set_default_timeout(15_000)
    external: list[str] = []

    def answer(route: Any) -> None:
        url = route.request.url
        if not url.startswith(SITE_URL):
            external.append(url)
            route.abort()
            return
        rel = unquote(urlsplit(url).path).removeprefix(urlsplit(SITE_URL).path) or "index.html"
        file = site / rel
        if rel == "sitemap.xml" and sitemap is not None:
            route.fulfill(body=sitemap, content_type="application/xml")
        elif file.is_file() and site.resolve() in file.resolve().parents:
            route.fulfill(path=str(file))
        else:
            route.fulfill(status=404, body="not found")

    context.route("**/*", answer)
    try:
        page = context.new_page()
        page.goto(SITE_URL + "index.html", wait_until="networkidle")
        yield page, external
    finally:
        context.close()


def follow_nav_link(page: Any) -> Any:
    """Mark the window, click the primary nav link to the Trace page, wait until it shows."""
    page.evaluate("window.__marker = 1")
    page.locator(NAV_LINK).click()
    page.wait_for_url("**/trace.html")
    page.wait_for_function("() => document.querySelector('article a[href$=\".trace\"]')")
    return page.evaluate("window.__marker")


@pytest.mark.slow
def test_the_sitemap_lists_every_page(built_site: Path) -> None:
    sitemap = (built_site / "sitemap.xml").read_text()
    for page in ("index.html", "trace.html", "building.html"):
        assert f"<loc>{SITE_URL}{page}</loc>" in sitemap


@pytest.mark.slow
@pytest.mark.browser
def test_a_nav_click_keeps_the_page_alive(browser: Any, built_site: Path) -> None:
    with opened(browser, built_site) as (page, external):
        assert follow_nav_link(page) == 1, "the click reloaded the page: no instant navigation"
        assert page.locator("article h1").first.inner_text().strip() != ""
        assert external == []


@pytest.mark.slow
@pytest.mark.browser
def test_without_sitemap_entries_the_click_reloads(browser: Any, built_site: Path) -> None:
    with opened(browser, built_site, sitemap=EMPTY_SITEMAP) as (page, _):
        assert follow_nav_link(page) is None
