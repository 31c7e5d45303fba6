"""Replayed parses of a page's figures, for a process that checks pages again and again.

Role: under ``serve`` an edit re-checks only the page that changed, but the gradients lab is a
page of about two megabytes whose explorer is most of it, and the audit and the links gate
each tokenize all of it again although the explorer did not change. Tokenizing is about half
of what those two gates spend on a page (the rest is their own handlers). This module lets
both replay a figure's tokens instead of tokenizing it again.

Contract: ``feed_page(parser, html, page, memo)`` is ``parser.feed(html)`` for an
``html.parser.HTMLParser`` (``convert_charrefs=True``) reading site page ``page``: the
parser's handlers are called with the same arguments, in the same order, with ``getpos()``
giving the same positions. Without a memo it is exactly that. With one
(``sitebuild.warm``'s), each top-level ``<figure>`` element of the page is an island: its
events (start, end and self-closing tags, text, comments, declarations) are recorded once, by
the standard tokenizer reading the island alone, and kept under the page and the island's
number with a digest of its text (the audit and the links gate share them); they are replayed
at the island's position afterwards. An island is replayed only where replaying is provably
the same as reading:
- the tokenizer reaches it in its neutral state (no text or tag held back, not inside a
  script or style);
- read alone, it is one balanced ``figure`` element that leaves the tokenizer neutral again.
Anything else (a ``<figure`` inside an attribute or a comment, an unclosed figure) is read
as it stands. ``tests/test_gates_islands.py`` holds the gates to identical findings with and
without replaying, on the built site and on broken pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, MutableMapping
from html.parser import HTMLParser
from typing import Any

from sitebuild.cache import sha256_bytes
from sitebuild.memo import remembered

_FIGURE_TAG = re.compile(r"<(/?)figure[\s>/]", re.IGNORECASE)
#: The handlers the tokenizer calls (``convert_charrefs=True`` never calls the charref ones).
_HANDLERS = ("handle_starttag", "handle_endtag", "handle_startendtag", "handle_data",
             "handle_comment", "handle_decl", "handle_pi", "unknown_decl")

Event = tuple[str, tuple[Any, ...], int, int]  # handler, arguments, line and column in the island


def feed_page(parser: HTMLParser, html: str, page: str,
              memo: MutableMapping[Any, Any] | None = None) -> None:
    """``parser.feed(html)``, replaying each island's recorded events (see the module doc)."""
    # The standard tokenizer's own feed: a parser whose ``feed`` calls this one is fine.
    read = HTMLParser.feed
    if memo is None:
        read(parser, html)
        return
    done = 0
    for number, (start, end) in enumerate(figure_spans(html)):
        read(parser, html[done:start])
        island = html[start:end]
        events = remembered(memo, ("island", page, number), sha256_bytes(island.encode("utf-8")),
                            lambda island=island: record(island))
        if events is not None and _neutral(parser):
            _replay(parser, events, island)
        else:
            read(parser, island)
        done = end
    read(parser, html[done:])


def figure_spans(html: str) -> Iterator[tuple[int, int]]:
    """Where each top-level ``<figure>`` element seems to start and end, by its tags' text
    alone (``record`` then holds each span to what the tokenizer reads)."""
    depth, start = 0, 0
    for tag in _FIGURE_TAG.finditer(html):
        if not tag.group(1):
            if depth == 0:
                start = tag.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                yield start, html.index(">", tag.start()) + 1


class _Recorder(HTMLParser):
    """Every handler call of the tokenizer, with where it was made."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[Event] = []
        for name in _HANDLERS:
            setattr(self, name, self._recording(name))

    def _recording(self, name: str) -> Any:
        def handler(*args: Any) -> None:
            line, column = self.getpos()
            self.events.append((name, args, line, column))

        return handler


def record(island: str) -> list[Event] | None:
    """The events of ``island`` read alone, or None when it is not one balanced ``figure``
    element that leaves the tokenizer neutral."""
    recorder = _Recorder()
    recorder.feed(island)
    depth, events = 0, recorder.events
    for index, (name, args, _line, _column) in enumerate(events):
        if name in ("handle_starttag", "handle_endtag") and args[0] == "figure":
            depth += 1 if name == "handle_starttag" else -1
            if depth == 0 and index != len(events) - 1:
                return None  # the first figure ends before the island does
    opened = bool(events) and events[0][0] == "handle_starttag" and events[0][1][0] == "figure"
    if not opened or depth != 0 or not _neutral(recorder):
        return None
    return events


def _neutral(parser: HTMLParser) -> bool:
    """Nothing held back and not inside a script or style: what comes next is read afresh."""
    return not parser.rawdata and parser.cdata_elem is None  # type: ignore[attr-defined]


def _replay(parser: HTMLParser, events: list[Event], island: str) -> None:
    line, column = parser.getpos()
    for name, args, at_line, at_column in events:
        parser.lineno = line + at_line - 1
        parser.offset = column + at_column if at_line == 1 else at_column
        # A fresh list of attributes each time: a handler may keep or change the one it gets.
        if name in ("handle_starttag", "handle_startendtag"):
            args = (args[0], list(args[1]))
        getattr(parser, name)(*args)
    newlines = island.count("\n")
    parser.lineno = line + newlines
    parser.offset = (len(island) - island.rfind("\n") - 1) if newlines else column + len(island)
