"""Render first: the pages of ``docs/`` rendered over the traces into plain Markdown.

Contract: ``render_pages(root, context, pages_dir, only)`` makes ``pages_dir`` hold exactly
what the site generator reads: each ``docs/**/*.md`` rendered (front matter ``trace:`` names
the trace its unqualified paths read; a page that cites ends with its References; one that
names a figure before showing it is rendered twice, ``numbering``), the other files of
``docs/`` as they are, KaTeX's vendored stylesheet and fonts, the search worker shim, each
trace at ``trace/<id>.trace`` (the parsed trace's bytes), the labs' notebooks
(``sitebuild.notebooks``) and the data pages' scripts load (``PageContext.data_files``). A
symbolic link under ``docs/`` is refused: only files inside the project publish. A file is
written only when its bytes change; ``only`` re-renders just those
pages. The folder lists what it holds (``publish.write_listing``), and a file there that the
list does not name, a user's, stops the render before anything is written or deleted.
Returns the files written. A page is a Jinja template rendered strictly
(``render_page``: undefined names fail, no expression may show a number), HTML-escaping, with
comments ``<#-- --#>`` so Markdown's ``{#id}`` stays Markdown; any failure is a ``PageError``
at ``PAGE:LINE`` (front matter counted).
"""

from __future__ import annotations

import contextlib
import os
import re
import traceback
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import jinja2
import yaml

from diagrams.format import number_tokens
from sitebuild.errors import BuildError
from sitebuild.exactness import check_exactness, check_paragraph_numbers
from sitebuild.notebooks import notebook_files
from sitebuild.page_context import PageContext, PageError
from sitebuild.paths import CHAPTER_TRACE, trace_url
from sitebuild.publish import PUBLISHED_FILES, check_listed, write_listing
from tracefile.errors import LocatedError
from tracefile.files import write_atomic
from tracefile.values import is_real

KATEX_DIST = "node_modules/katex/dist"
SHIM_SRC = "node_modules/iframe-worker/shim/index.js"
#: Where the offline search's worker shim is published (mkdocs.yml's ``extra.polyfills``).
SHIM_URL = "assets/vendor/iframe-worker/shim.js"
_TRACE_KEY = re.compile(r"""\s*["']?trace["']?\s*:""")


def render_pages(root: Path, context: PageContext, pages_dir: Path,
                 only: Collection[str] | None = None) -> list[str]:
    """Fill ``pages_dir`` (see the module doc); the names of the files written, sorted."""
    wanted = _sources(root, context)
    check_listed(pages_dir)  # before a page is written: a file of the user's stops the render
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
        if stale.relative_to(pages_dir).as_posix() not in {*wanted, PUBLISHED_FILES}:
            stale.unlink()
    write_listing(pages_dir, wanted)
    return written


def render_one(root: Path, source: Path, context: PageContext) -> str:
    """One page's Markdown, rendered; the banner of an unverified trace first."""
    name = source.relative_to(root).as_posix()
    try:
        text = source.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        line = source.read_bytes().count(b"\n", 0, err.start) + 1
        raise PageError(name, line, f"not UTF-8 text ({err.reason} at byte {err.start})") \
            from None
    meta, body, offset = split_front_matter(text, name)
    check_listings(text, name)
    trace_id = meta.get("trace", CHAPTER_TRACE)
    try:
        if not isinstance(trace_id, str):
            raise PageError(name, None, f"front matter's trace must be a trace's name, "
                            f"got {trace_id!r}")
        context.page_globals(trace_id)  # the trace is known
    except LocatedError as err:
        line = next((n for n, row in enumerate(text.splitlines()[:offset], 1)
                     if _TRACE_KEY.match(row)), None)
        raise PageError(name, line, err.message) from None
    # The front matter stays for the generator (a title, say); the banner goes after it.
    front = "".join(text.splitlines(keepends=True)[:offset])
    page_name = name.removeprefix("docs/")
    page_globals = context.page_globals(trace_id, page=page_name)
    page = render_page(body, name, page_globals, offset)
    if page_globals["ref"].missed:  # a reference came before its figure: number, then name
        page_globals = context.page_globals(trace_id, page_globals["ref"].shown, page_name)
        page = render_page(body, name, page_globals, offset)
    check_exactness(page, name, context.traces.resolve, body, offset)
    check_paragraph_numbers(page, name, context.traces.resolve, body, offset)
    if link := context.edition_link(page_name):  # under the page's title
        page = _TITLE_LINE.sub(lambda title: f"{title.group(0)}\n{link}", page, count=1)
    return front + context.banner() + page + page_globals["cite"].section()


#: Where a listing may be included from (``--8<-- "engine/...:region"``): the engine and the
#: trace contract, never a page (its raw template) nor any other file of the machine.
LISTING_SOURCES = ("engine/", "tracefile/")
_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
_INCLUDE = re.compile(r"""\s*-{1,}8<-{1,}\s*(?:"([^"]*)"|'([^']*)')?\s*$""")


def check_listings(text: str, name: str) -> None:
    """The code blocks typed into a page's source: each line of one is a snippet include of
    a file under ``LISTING_SOURCES`` or holds no number (``number_tokens``), since the audit
    reads listings as code; a ``PageError`` at the first line that breaks this."""
    fence = None
    for number, row in enumerate(text.splitlines(), 1):
        marker = _FENCE.match(row)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            fence = None if fence else marker.group(1)
            continue
        included = _INCLUDE.match(row)
        if included:
            target = (included.group(1) or included.group(2) or "").partition(":")[0]
            if not target.startswith(LISTING_SOURCES) or ".." in Path(target).parts:
                raise PageError(name, number, f"includes {target or 'a block of files'!r}; "
                                f"a listing is one named file under {' or '.join(LISTING_SOURCES)}")
        elif fence is not None and (found := number_tokens(row)):
            raise PageError(name, number, f"a code block typed into the page holds the number "
                            f"{found[0]!r}: a listing is included from the source "
                            "(--8<--), a number from tv(...)")


def _sources(root: Path, context: PageContext) -> dict[str, Path | bytes]:
    """Every file the pages folder holds, by its path there: a file to copy or render, or
    bytes."""
    docs = root / "docs"
    files: dict[str, Path | bytes] = {}
    for path in sorted(docs.rglob("*")):
        if path.is_symlink():  # it could publish any file of the machine
            raise BuildError(path.relative_to(root).as_posix(), "is a symbolic link (to "
                             f"{os.readlink(path)}); the site publishes only the regular "
                             "files inside docs/")
        if path.is_file():
            files[path.relative_to(docs).as_posix()] = path
    katex = root / KATEX_DIST
    if not all((katex / name).exists() for name in ("katex.min.css", "fonts")):
        raise BuildError(KATEX_DIST, "KaTeX is not installed; run `./dev setup` (npm ci)")
    if not (root / SHIM_SRC).is_file():
        # Without it the offline search silently stops working: refuse, as for KaTeX.
        raise BuildError(SHIM_SRC, "the offline search's iframe-worker shim is not "
                         "installed; run `./dev setup` (npm ci)")
    # Its stylesheet and fonts only: the build typesets the math (sitebuild.typeset_math).
    vendored = [katex / "katex.min.css",
                *sorted(p for p in (katex / "fonts").iterdir() if p.is_file())]
    for path in vendored:
        files["assets/vendor/katex/" + path.relative_to(katex).as_posix()] = path
    files[SHIM_URL] = root / SHIM_SRC
    for trace in context.traces:  # what was parsed, not a file that may have changed since
        files[trace_url(trace.trace_id)] = trace.text.encode("utf-8")
    files.update(notebook_files(root))
    files.update(context.data_files())
    return files


def _write_if_changed(target: Path, data: bytes) -> bool:
    with contextlib.suppress(OSError):
        if target.read_bytes() == data:
            return False
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, data)
    return True


def make_env() -> jinja2.Environment:
    """The page environment: strict, HTML-escaping, Markdown-friendly comments, and no number
    computed by the page itself (``{{ 6 * 7 }}``): a number shown comes from ``tv``."""
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
        comment_start_string="<#--",
        comment_end_string="--#>",
        finalize=_no_number,
    )


def _no_number(value: Any) -> Any:
    if is_real(value):
        raise PageError("<page>", None, f"an expression shows the number {value!r}, computed "
                        "by the page: a number on a page comes from tv(...)")
    return value


def render_page(source: str, name: str, context: Mapping[str, Any], line_offset: int = 0) -> str:
    """Render page ``source`` (called ``name`` in errors) with ``context`` as globals."""
    env = make_env()
    try:
        tree = env.parse(source, name=name, filename=name)
    except jinja2.TemplateSyntaxError as err:
        raise PageError(name, (err.lineno or 0) + line_offset, err.message or "syntax error") \
            from None
    _refuse_constant_numbers(tree, name, line_offset)
    try:
        code = env.compile(tree, name=name, filename=name)
        template = env.template_class.from_code(env, code, env.make_globals(dict(context)))
        return template.render()
    except Exception as err:  # every failure becomes one located line
        line = _template_line(err, name)
        raise PageError(name, None if line is None else line + line_offset, _describe(err)) \
            from None


def _refuse_constant_numbers(tree: jinja2.nodes.Template, name: str, line_offset: int) -> None:
    """Jinja folds a constant expression (``{{ 6 * 7 }}``) before ``finalize`` sees it: such
    an expression showing a number is refused at its line here."""
    for output in tree.find_all(jinja2.nodes.Output):
        for child in output.nodes:
            if isinstance(child, jinja2.nodes.TemplateData):
                continue
            try:
                _no_number(child.as_const(jinja2.nodes.EvalContext(make_env())))
            except jinja2.nodes.Impossible:
                continue
            except PageError as err:
                raise PageError(name, child.lineno + line_offset, err.message) from None


def _template_line(err: BaseException, name: str) -> int | None:
    """The page line Jinja's rewritten traceback points at, if any."""
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == name]
    return lines[-1] if lines else None


def _describe(err: Exception) -> str:
    if isinstance(err, LocatedError):
        return err.message
    if isinstance(err, jinja2.UndefinedError):
        return f"undefined name or attribute: {err.message}"
    return f"{err.__class__.__name__}: {err}"


_TITLE_LINE = re.compile(r"^# .*\n", re.M)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)


def split_front_matter(text: str, name: str) -> tuple[dict[str, Any], str, int]:
    """``(front matter, the page after it, lines it took)``; a page without front matter has
    ``({}, text, 0)``. Front matter that is not a YAML mapping is a ``PageError``."""
    found = _FRONT_MATTER.match(text)
    if found is None:
        return {}, text, 0
    try:
        meta = yaml.safe_load(found.group(1) or "") or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = None if mark is None else mark.line + 2
        raise PageError(name, line, f"front matter is not valid YAML: "
                        f"{getattr(err, 'problem', None) or err}") from None
    if not isinstance(meta, dict):
        raise PageError(name, 1, "front matter must be a mapping of keys to values")
    return meta, text[found.end():], text[: found.end()].count("\n")
