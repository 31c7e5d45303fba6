"""A sentence never claims more exactness than the values it shows have, and a paragraph
never carries more numbers than a reader can hold.

Contract: ``check_exactness(page, name, resolve, source, offset)`` reads a rendered page
(Markdown with each traced value as the span ``diagrams.format.traced`` writes, which names
its path and format), so every value counts whatever form the template used to show it (a
keyword format, a loop, a macro), each compared as shown with ``resolve(PATH)`` as stored
(``format_value(value, "exact")``). In the prose (code, tables and figures skipped):

- in a sentence that says *exact*, *exactly* or *precisely*, every value shows as stored;
- no two values of a sentence show alike but are stored apart (a float rounded into another,
  or into an int, or two vectors rounded alike);
- no paragraph (or list item) shows more than ``MAX_NUMBERS`` values that are numbers or
  lists of numbers (names and yes-or-no values do not count): tables and charts carry the
  rest.

The first value that breaks a rule is a ``PageError`` at the line of ``source`` (the page's
template, whose body starts after ``offset`` lines) that names its path, else at its line as
rendered, naming both sides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from diagrams.format import format_value
from sitebuild.page_context import PageError
from tracefile.values import is_real

_EXACT = re.compile(r"\b(?:exact|exactly|precisely)\b", re.I)
#: The most numbers one paragraph may show (issue "Labs a learner finishes").
MAX_NUMBERS = 4
_SPAN = re.compile(r'<span class="tv" data-trace="([^"]+)"(?: data-what="[^"]*")? '
                   r'data-format="([^"]+)"[^>]*>[^<]*</span>')
# What a reader never reads as prose: code blocks, inline code, tables (a row of a Markdown
# table, or an HTML one) and figures. A table row's values are columns, not one statement.
_NOT_PROSE = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$|`[^`\n]+`"
                        r"|<(table|svg|figure)\b.*?</\3>|^[ \t]*\|[^\n]*$", re.M | re.S)
# A paragraph ends at a blank line and before a line that starts a list item, heading, table
# row or admonition.
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*+] |\d+\. |#|\||!!!|\?\?\?))")
# A sentence ends at a full stop, question or exclamation mark before a capital or a tag, at
# a blank line, and before a line that starts a list item, heading, table row or admonition.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z{*_`\[$<])|" + _PARAGRAPH_END.pattern)


def check_exactness(page: str, name: str, resolve: Callable[[str], Any], source: str = "",
                    offset: int = 0) -> None:
    """Refuse a rounded value where a sentence says it is exact, and two values shown alike
    but stored apart (see the module doc)."""
    prose = _NOT_PROSE.sub(lambda block: re.sub(r"[^\n]", " ", block.group(0)), page)
    spans = {span.start(): span for span in _SPAN.finditer(prose)}
    # Each value becomes one inert character, so its digits and attributes neither end a
    # sentence nor say "exact".
    text = _SPAN.sub(lambda span: "\x00" + " " * (len(span.group(0)) - 1), prose)
    for start, sentence in _sentences(text):
        word = _EXACT.search(sentence)
        seen: dict[str, tuple[str, str]] = {}  # shown: (path, stored) of the first so shown
        # Each value is the inert character that stands for it in the sentence.
        for at in (start + i for i, c in enumerate(sentence) if c == "\x00"):
            span = spans[at]
            path, value = span.group(1), resolve(span.group(1))
            shown, stored = format_value(value, span.group(2)), format_value(value, "exact")
            if word is not None and stored != shown:
                raise PageError(name, _line(page, at, path, source, offset),
                                f"a sentence saying {word.group(0)!r} shows {path} as {shown}, "
                                f"stored as {stored}: show it as stored "
                                f'(tv("{_local(path)}", "exact")) or drop {word.group(0)!r}')
            other, other_stored = seen.setdefault(shown, (path, stored))
            if other_stored != stored:
                raise PageError(name, _line(page, at, path, source, offset),
                                f"a sentence shows {other} and {path} both as {shown}, stored "
                                f"as {other_stored} and {stored}: show them with the figures "
                                "that tell them apart (fixed6, exact)")


def check_paragraph_numbers(page: str, name: str, resolve: Callable[[str], Any],
                            source: str = "", offset: int = 0) -> None:
    """Refuse a paragraph that shows more than ``MAX_NUMBERS`` numbers (see the module doc),
    at the line of its first number past the limit."""
    prose = _NOT_PROSE.sub(lambda block: re.sub(r"[^\n]", " ", block.group(0)), page)
    start = 0
    for end in [*_PARAGRAPH_END.finditer(prose), None]:
        stop = len(prose) if end is None else end.start()
        numbers = [span for span in _SPAN.finditer(prose, start, stop)
                   if _is_number(resolve(span.group(1)))]
        if len(numbers) > MAX_NUMBERS:
            extra = numbers[MAX_NUMBERS]
            raise PageError(name, _line(page, extra.start(), extra.group(1), source, offset),
                            f"a paragraph shows {len(numbers)} numbers, more than "
                            f"{MAX_NUMBERS}: keep the ones its point needs and let a table "
                            f"or a chart carry the rest (the fifth is {extra.group(1)})")
        start = stop if end is None else end.end()


def _is_number(value: Any) -> bool:
    """A number or a list of numbers, not a name or a yes-or-no value."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_number(item) for item in value)
    return is_real(value)


def _local(path: str) -> str:
    """A qualified path (``trace:PATH``) as a page of that trace writes it."""
    return path.split(":", 1)[-1]


def _line(page: str, at: int, path: str, source: str, offset: int) -> int:
    """The line of ``source`` that writes ``path``, when one line does; else the line of the
    rendered page at ``at`` counted in the source (after its ``offset`` lines of front
    matter)."""
    written = [n for n, row in enumerate(source.splitlines(), 1) if f'"{_local(path)}"' in row
               or f"'{_local(path)}'" in row]
    return offset + (written[0] if len(written) == 1 else page.count("\n", 0, at) + 1)


def _sentences(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, sentence)`` of the page's prose."""
    start = 0
    for end in _SENTENCE_END.finditer(text):
        yield start, text[start:end.start()]
        start = end.end()
    yield start, text[start:]
