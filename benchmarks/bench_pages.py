"""Hand-run benchmark: what each published page costs a reader's browser, against a plain
Material page of the same site (its 404 page: the theme, its scripts and styles, no content).

Run from the project root after a build, with the project's virtualenv:

    .venv/bin/python benchmarks/bench_pages.py [--site site] [--repeat 5] [--slowdown 4]

It serves the built site on a loopback port and opens each page in Debian's headless
Chromium (through Playwright, as the browser tests do) with the CPU slowed ``--slowdown``
times (DevTools' CPU throttling), in a fresh browser context each time, page by page in
turn round by round. It prints, per page, the median time to the first contentful paint, to
DOMContentLoaded and to the load event, the DOM's element count, the HTML's bytes,
DOMContentLoaded as a multiple of the floor's, and where the main thread's time went up to
the load event: styles, layout and scripts (DevTools' performance metrics, throttled).
Nothing is asserted: the goals (at most 600 KB of HTML and 8,000 DOM nodes a page) are
written down in the README with the figures.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

PAGES = ("404.html", "index.html", "labs/gradient-flow.html", "labs/residual-stream.html",
         "trace.html", "building.html")
CHROMIUM = "/usr/bin/chromium"
TIMING = """() => { const [nav] = performance.getEntriesByType('navigation');
    const paint = performance.getEntriesByName('first-contentful-paint')[0];
    return [nav.domContentLoadedEventEnd, nav.loadEventEnd, paint ? paint.startTime : NaN,
            document.getElementsByTagName('*').length]; }"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Silent."""


#: DevTools' main-thread totals (seconds) reported after the load: styles, layout, scripts.
SPENT = ("RecalcStyleDuration", "LayoutDuration", "ScriptDuration")


def measure(browser, url: str, slowdown: float) -> tuple[float, ...]:
    """One cold load of ``url``: DOMContentLoaded, load and first contentful paint in ms,
    the element count, and the ms spent on styles, layout and scripts."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        devtools = context.new_cdp_session(page)
        devtools.send("Performance.enable")
        devtools.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
        page.goto(url, wait_until="load")
        page.wait_for_function("performance.getEntriesByType('navigation')[0].loadEventEnd > 0")
        ready, loaded, painted, nodes = page.evaluate(TIMING)
        metrics = {m["name"]: m["value"]
                   for m in devtools.send("Performance.getMetrics")["metrics"]}
        return (ready, loaded, painted, nodes, *(1000 * metrics[name] for name in SPENT))
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("site"), help="a built site folder")
    parser.add_argument("--repeat", type=int, default=5, help="loads of each page (median)")
    parser.add_argument("--slowdown", type=float, default=4, help="CPU throttling rate")
    args = parser.parse_args()
    handler = functools.partial(_Quiet, directory=str(args.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    runs: dict[str, list[tuple[float, ...]]] = {page: [] for page in PAGES}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox"])
        for _ in range(args.repeat):
            for page in PAGES:
                runs[page].append(measure(browser, base + page, args.slowdown))
        browser.close()
    server.shutdown()
    floor = statistics.median(run[0] for run in runs[PAGES[0]])
    print(f"CPU slowed {args.slowdown:g}x, median of {args.repeat} cold loads per page\n")
    print("| page | first paint | DOMContentLoaded | load | DOM elements | HTML "
          "| DOMContentLoaded x floor | styles | layout | scripts |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for page, measured in runs.items():
        ready, loaded, painted, _, style, layout, script = (
            statistics.median(run[k] for run in measured) for k in range(7))
        nodes = measured[-1][3]
        size = (args.site / page).stat().st_size
        name = "floor: 404.html" if page == PAGES[0] else page
        print(f"| {name} | {painted:,.0f} ms | {ready:,.0f} ms | {loaded:,.0f} ms | {nodes:,} "
              f"| {size / 1000:,.0f} KB | {ready / floor:.2f} | {style:,.0f} ms "
              f"| {layout:,.0f} ms | {script:,.0f} ms |")


if __name__ == "__main__":
    main()
