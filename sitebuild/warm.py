"""Content-keyed memos for a process that rebuilds the site again and again (``serve``).

Role: after an edit confined to ``docs/``, ``serve`` rebuilds in process; most pages did not
change, and redoing their work is most of a rebuild. ``Warm`` remembers, per page, what MkDocs
and the gates made of it, keyed by what that work reads, and hands it back only when every
such input is unchanged. A one-shot ``build_site.py build`` never uses it: builds stay plain
MkDocs, and the memo's only claim is that it changes nothing but time (the test suite holds
it to byte-identical sites).

Contract:
- ``Warm.mkdocs()`` is a context manager that, for one MkDocs build, remembers
  - a page's Markdown-to-HTML render (``Page.render``), keyed by its page, its Markdown after
    the hook, the site's file list and the configuration (mkdocs.yml), and valid only while
    every file its snippets read still holds the text they read; a render that logged a
    warning on MkDocs' logger (what strict mode counts) is never kept: it must warn again;
  - the search plugin's entries for a page, keyed by its URL, title, HTML, table of contents
    and front matter, and, for a page that changed, what its HTML reader made of each figure
    of the page that did not (``sitebuild.gates.islands``: replayed, not read again);
  - the theme's compiled templates (Jinja's own bytecode cache, which checks each
    template's source);
  - the theme's list of files, keyed by its folders and its static templates, when every
    theme folder belongs to an installed package (a folder of the project's own is listed
    anew each build).
  It restores MkDocs' own methods when the build ends, failed or not, and hands each build
  its own copy of a remembered table of contents.
- ``Warm.renders`` is the memo the hook keeps each page's Jinja rendering in
  (``BuildSettings.page_memo``), under the page's Markdown and a digest of the traces, report,
  generated files, bibliography and lock (``sitebuild.hook.context_digest``), and each figure
  the hook puts into a page after the conversion (a chart, its values table, the explorer)
  under the same digest.
- ``Warm.gates`` is the memo the gates take (``sitebuild.gates.run_gates(memo=...)``): each
  gate keys a page's findings by the page, a digest of its HTML and of what else it reads;
  the audit and the links gate keep there, too, the tokens of each figure of a page
  (``sitebuild.gates.islands``), which they replay when a page changed around them.
- ``Warm.trace(path, schema)`` is the trace file at ``path`` parsed, kept while its bytes
  are the same.
- Each memo keeps one entry per page and step, or per figure, it has seen
  (``sitebuild.memo``).
What no key holds is the code itself (ours, MkDocs', the Markdown extensions) and the
installed packages: they are what this process imported, and ``serve`` rebuilds in process
only while nothing outside ``docs/`` has changed since it started (after any other edit every
rebuild is a fresh process, and a changed environment needs a restarted server anyway).
Builds that use one ``Warm`` hold ``Warm.lock``: serve fills the memos in a thread of its own
while it starts serving.
"""

from __future__ import annotations

import copy
import logging
import sysconfig
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2

from sitebuild.cache import input_key, sha256_bytes
from sitebuild.gates.islands import feed_page
from sitebuild.memo import remembered
from tracefile import Trace, parse_trace
from tracefile.parser import read_limited
from tracefile.schema import TraceSchema


def digest(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


class _Bytecode(jinja2.BytecodeCache):
    """Compiled templates in memory; Jinja discards an entry whose source checksum differs."""

    def __init__(self) -> None:
        self.stored: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.stored:
            bucket.bytecode_from_string(self.stored[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.stored[bucket.key] = bucket.bytecode_to_string()


@dataclass(frozen=True)
class _Rendered:
    """What ``Page.render`` left on a page, with the snippet files it read."""

    content: str
    toc: Any
    title: str | None
    anchors: frozenset[str]
    links_to_anchors: dict[str, dict[str, str]] | None  # by the linked page's src_uri
    snippets: tuple[tuple[str, str, str], ...]  # (path, encoding, digest of the text read)

    def current(self) -> bool:
        """Whether every snippet file still holds the text the render read from it."""
        for path, encoding, seen in self.snippets:
            try:
                with open(path, encoding=encoding) as handle:  # as pymdownx reads it
                    if digest(handle.read()) != seen:
                        return False
            except (OSError, UnicodeDecodeError):
                return False
        return True

    def restore(self, page: Any, files: Any) -> None:
        # A copy each time: a plugin or theme that changed the table of contents of one
        # build must not change it for the next.
        page.content, page.toc = self.content, copy.deepcopy(self.toc)
        page._title_from_render = self.title
        page.present_anchor_ids = set(self.anchors)
        if self.links_to_anchors is not None:
            # Keyed by this build's File objects: the anchors are checked against the pages
            # of this build, not the ones the memo saw.
            found = {uri: files.get_file_from_path(uri) for uri in self.links_to_anchors}
            page.links_to_anchors = {found[uri]: dict(links)
                                     for uri, links in self.links_to_anchors.items()
                                     if found[uri] is not None}


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class Warm:
    """The memos of one long-lived process (see the module doc)."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[tuple[str, ...], _Rendered]] = {}
        self.search: dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]] = {}
        self.bytecode = _Bytecode()
        self.gates: dict[Any, Any] = {}
        self.renders: dict[Any, Any] = {}  # the hook's, through BuildSettings.page_memo
        self.islands: dict[Any, Any] = {}  # the search parser's recorded figures
        self.theme_files: dict[Any, list[tuple[str, str]]] = {}
        self.traces: dict[Any, Any] = {}  # parsed traces, by path and content
        self.hits = self.misses = 0
        self.lock = threading.Lock()  # one build at a time: serve's rebuilds and its priming

    def trace(self, path: Path, schema: TraceSchema) -> Trace:
        """The trace file at ``path`` parsed, kept while its bytes are the same."""
        data = read_limited(Path(path))
        return remembered(self.traces, ("trace", str(path), schema.trace_id),
                          sha256_bytes(data), lambda: parse_trace(data, str(path), schema))

    @contextmanager
    def mkdocs(self) -> Iterator[None]:
        """Remember page renders, search entries, compiled templates and the theme's files
        for one build."""
        from material.plugins.search.plugin import Parser, SearchIndex
        from mkdocs.structure.files import Files
        from mkdocs.structure.pages import Page
        from mkdocs.theme import Theme
        from pymdownx.snippets import SnippetPreprocessor

        saved = (Page.render, SearchIndex.add_entry_from_context, Theme.get_env,
                 SnippetPreprocessor.read_lines, Parser.feed, Files.add_files_from_theme)
        own_feed = vars(Parser).get("feed")  # None: the search parser inherits HTMLParser's
        reads: list[tuple[str, str, str]] = []
        indexed: list[str] = [""]  # the page the search plugin is reading
        Page.render = self._render_with(saved[0], reads, {})
        SearchIndex.add_entry_from_context = self._index_with(saved[1], indexed)
        Theme.get_env = self._env_with(saved[2])
        SnippetPreprocessor.read_lines = _recording(saved[3], reads)
        Parser.feed = self._search_feed(indexed)
        Files.add_files_from_theme = self._theme_files_with(saved[5])
        try:
            yield
        finally:
            (Page.render, SearchIndex.add_entry_from_context, Theme.get_env,
             SnippetPreprocessor.read_lines, Parser.feed, Files.add_files_from_theme) = saved
            if own_feed is None:
                del Parser.feed

    def _render_with(self, render: Any, reads: list[tuple[str, str, str]],
                     build_keys: dict[int, str]) -> Any:
        warm = self

        def memo_render(page: Any, config: Any, files: Any) -> None:
            uri = page.file.src_uri
            # The file list and the configuration are this build's, the same for every page.
            if not build_keys:
                build_keys[id(files)] = _files_key(files)
                build_keys[id(config)] = _markdown_key(config)
            key = (page.markdown or "", build_keys[id(files)], build_keys[id(config)])
            kept = warm.pages.get(uri)
            if kept is not None and kept[0] == key and kept[1].current():
                warm.hits += 1
                kept[1].restore(page, files)
                return
            warm.misses += 1
            warnings, logger = _Warnings(), logging.getLogger("mkdocs")
            reads.clear()
            logger.addHandler(warnings)
            try:
                render(page, config, files)
            finally:
                logger.removeHandler(warnings)
            if warnings.count == 0:
                warm.pages[uri] = (key, _rendered(page, reads))
            else:
                warm.pages.pop(uri, None)

        return memo_render

    def _index_with(self, add: Any, indexed: list[str]) -> Any:
        warm = self

        def memo_add(index: Any, page: Any) -> None:
            key = (page.title or "", page.content or "", str(page.toc), repr(page.meta))
            kept = warm.search.get(page.url)
            if kept is not None and kept[0] == key:
                index.entries.extend(copy.deepcopy(kept[1]))
                return
            before = len(index.entries)
            indexed[0] = page.url
            add(index, page)
            warm.search[page.url] = (key, copy.deepcopy(index.entries[before:]))

        return memo_add

    def _search_feed(self, indexed: list[str]) -> Any:
        islands = self.islands

        def feed(parser: HTMLParser, data: str) -> None:
            # The search parser reads a page's figures (charts, values tables) as the gates do.
            feed_page(parser, data, f"search {indexed[0]}", islands)

        return feed

    def _theme_files_with(self, add: Any) -> Any:
        listed = self.theme_files

        def memo_theme_files(files: Any, env: jinja2.Environment, config: Any) -> None:
            from mkdocs.structure.files import File

            dirs = tuple(config.theme.dirs)
            if not all(_installed(folder) for folder in dirs):
                add(files, env, config)  # a theme folder of the project's own may change
                return
            key = (dirs, tuple(sorted(config.theme.static_templates)))
            kept = listed.get(key)
            if kept is None:
                scratch = type(files)([])
                add(scratch, env, config)  # every theme file, as MkDocs lists and finds them
                kept = listed[key] = [(file.src_uri, file.src_dir) for file in scratch]
            for path, folder in kept:  # what MkDocs' own loop does with each
                if files.get_file_from_path(path) is None:
                    files.append(File(path, folder, config.site_dir, config.use_directory_urls))

        return memo_theme_files

    def _env_with(self, get_env: Any) -> Any:
        bytecode = self.bytecode

        def memo_env(theme: Any) -> jinja2.Environment:
            env = get_env(theme)
            env.bytecode_cache = bytecode
            return env

        return memo_env


def _installed(folder: str) -> bool:
    """Whether ``folder`` belongs to an installed package (what serve never sees change)."""
    paths = sysconfig.get_paths()
    return any(Path(folder).resolve().is_relative_to(Path(paths[kind]).resolve())
               for kind in ("purelib", "platlib"))


def _recording(read_lines: Any, reads: list[tuple[str, str, str]]) -> Any:
    """``read_lines`` noting each file it read and a digest of the very text it returned (a
    file saved again during the render then differs from what is remembered)."""

    def recorded(self: Any, path: str) -> list[str]:
        lines = read_lines(self, path)
        reads.append((path, self.encoding, digest("\n".join(lines))))
        return lines

    return recorded


def _rendered(page: Any, reads: list[tuple[str, str, str]]) -> _Rendered:
    links = getattr(page, "links_to_anchors", None)
    return _Rendered(
        page.content, copy.deepcopy(page.toc), page._title_from_render,
        frozenset(page.present_anchor_ids or ()),
        None if links is None else {f.src_uri: dict(v) for f, v in links.items()},
        tuple(dict.fromkeys(reads)))


def _files_key(files: Any) -> str:
    """The site's file list as links resolve against it."""
    return digest("\n".join(sorted(f"{f.src_uri}\t{f.dest_uri}\t{f.url}" for f in files)))


def _markdown_key(config: Any) -> str:
    """The configuration a render reads: mkdocs.yml as written and as loaded."""
    try:
        written = Path(config.config_file_path).read_bytes()
    except (OSError, TypeError):
        written = b""
    loaded = repr((config["markdown_extensions"], sorted(
        (name, repr(options)) for name, options in (config["mdx_configs"] or {}).items()),
        config["use_directory_urls"], repr(config["validation"])))
    return input_key([("mkdocs.yml", written), ("loaded", loaded)])
