"""Render first: the pages of ``docs/`` rendered over the traces into plain Markdown.

Contract: ``render_pages(root, context, pages_dir, only)`` makes ``pages_dir`` hold exactly
what the site generator reads: each ``docs/**/*.md`` rendered (front matter ``trace:`` names
the trace its unqualified paths read), the other files of ``docs/`` as they are, the vendored
KaTeX and search worker shim, and each trace at ``trace/<id>.trace``. A file is written only
when its bytes change; ``only`` re-renders just those pages. Returns the files written.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection
from pathlib import Path

from sitebuild.errors import BuildError
from sitebuild.page_context import PageContext
from sitebuild.paths import CHAPTER_TRACE, trace_url
from sitebuild.templates import PageError, render_page, split_front_matter
from tracefile.errors import LocatedError
from tracefile.files import write_atomic

KATEX_DIST = "node_modules/katex/dist"
SHIM_SRC = "node_modules/iframe-worker/shim/index.js"
#: Where the offline search's worker shim is published (mkdocs.yml's ``extra.polyfills``).
SHIM_URL = "assets/vendor/iframe-worker/shim.js"
_TRACE_KEY = re.compile(r"""\s*["']?trace["']?\s*:""")


def render_pages(root: Path, context: PageContext, pages_dir: Path,
                 only: Collection[str] | None = None) -> list[str]:
    """Fill ``pages_dir`` (see the module doc); the names of the files written, sorted."""
    wanted = _sources(root, context)
    docs = root / "docs"
    written = []
    for name, source in sorted(wanted.items()):
        target = pages_dir / name
        if only is not None and f"docs/{name}" not in only and target.is_file():
            continue
        if isinstance(source, Path) and source.suffix == ".md" and source.is_relative_to(docs):
            data = render_one(root, source, context).encode("utf-8")
        else:
            data = source.read_bytes() if isinstance(source, Path) else source
        if _write_if_changed(target, data):
            written.append(name)
    for stale in sorted(p for p in pages_dir.rglob("*") if p.is_file()):
        if stale.relative_to(pages_dir).as_posix() not in wanted:
            stale.unlink()
    return written


def render_one(root: Path, source: Path, context: PageContext) -> str:
    """One page's Markdown, rendered; the banner of an unverified trace first."""
    name = source.relative_to(root).as_posix()
    try:
        text = source.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise PageError(name, None, f"not UTF-8 text ({err.reason} at byte {err.start})") \
            from None
    meta, body, offset = split_front_matter(text, name)
    trace_id = meta.get("trace", CHAPTER_TRACE)
    try:
        if not isinstance(trace_id, str):
            raise PageError(name, None, f"front matter's trace must be a trace's name, "
                            f"got {trace_id!r}")
        page_globals = context.page_globals(trace_id)
    except LocatedError as err:
        line = next((n for n, row in enumerate(text.splitlines()[:offset], 1)
                     if _TRACE_KEY.match(row)), None)
        raise PageError(name, line, err.message) from None
    # The front matter stays for the generator (a title, say); the banner goes after it.
    front = "".join(text.splitlines(keepends=True)[:offset])
    return front + context.banner() + render_page(body, name, page_globals, offset)


def _sources(root: Path, context: PageContext) -> dict[str, Path | bytes]:
    """Every file the pages folder holds, by its path there: a file to copy or render, or
    bytes."""
    docs = root / "docs"
    files: dict[str, Path | bytes] = {
        p.relative_to(docs).as_posix(): p for p in sorted(docs.rglob("*")) if p.is_file()}
    katex = root / KATEX_DIST
    if not all((katex / name).exists() for name in ("katex.min.js", "katex.min.css", "fonts")):
        raise BuildError(KATEX_DIST, "KaTeX is not installed; run `./dev setup` (npm ci)")
    if not (root / SHIM_SRC).is_file():
        # Without it the offline search silently stops working: refuse, as for KaTeX.
        raise BuildError(SHIM_SRC, "the offline search's iframe-worker shim is not "
                         "installed; run `./dev setup` (npm ci)")
    vendored = [katex / "katex.min.js", katex / "katex.min.css",
                *sorted(p for p in (katex / "fonts").iterdir() if p.is_file())]
    for path in vendored:
        files["assets/vendor/katex/" + path.relative_to(katex).as_posix()] = path
    files[SHIM_URL] = root / SHIM_SRC
    for trace_id, path in context.trace_paths.items():
        files[trace_url(trace_id)] = path
    return files


def _write_if_changed(target: Path, data: bytes) -> bool:
    with contextlib.suppress(OSError):
        if target.read_bytes() == data:
            return False
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, data)
    return True
