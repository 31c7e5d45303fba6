"""A sentence never claims more exactness than the values it shows have.

Contract: ``check_exactness(source, name, resolve, default_format)`` reads a page's source
(Jinja over Markdown; code and comments skipped) and checks every ``tv("PATH")`` or
``tv("PATH", "FORMAT")`` written with literal arguments, as shown in its format
(``default_format`` when none is given) against the value ``resolve(PATH)`` stored:

- in a sentence that says *exact*, *exactly* or *precisely*, every value shows as stored;
- no two values of a sentence show alike but are stored apart (a float rounded into another).

The first call that breaks a rule is a ``PageError`` at its line naming both sides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from diagrams.format import format_value
from sitebuild.page_context import PageError
from tracefile.errors import LocatedError

_EXACT = re.compile(r"\b(?:exact|exactly|precisely)\b", re.I)
_TV = re.compile(r"""\btv\(\s*(["'])([^"']+)\1\s*(?:,\s*(["'])(\w+)\3\s*)?\)""")
_EXPRESSION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
# What a reader never sees as prose: code blocks, inline code and the page's comments.
_NOT_PROSE = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$|`[^`\n]+`|<#--.*?--#>",
                        re.M | re.S)
# A sentence ends at a full stop, question or exclamation mark before a capital or a tag, at
# a blank line, and before a line that starts a list item, heading, table row or admonition.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z{*_`\[$])|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+] |\d+\. |#|\||!!!|\?\?\?))")


def check_exactness(source: str, name: str, resolve: Callable[[str], Any],
                    default_format: str) -> None:
    """Refuse a rounded value where a sentence says it is exact, and two values shown alike
    but stored apart (see the module doc)."""
    for start, sentence in _sentences(source):
        word = _EXACT.search(_EXPRESSION.sub(" ", sentence))  # the prose, not a format name
        seen: dict[str, tuple[str, str]] = {}  # shown: (path, stored) of the first value shown so
        for call in _TV.finditer(sentence):
            path, fmt = call.group(2), call.group(4) or default_format
            try:
                value = resolve(path)
            except LocatedError:  # never shown, as the page rendered: an example in a raw block
                continue
            shown, stored = format_value(value, fmt), format_value(value, "exact")
            line = source.count("\n", 0, start + call.start()) + 1
            if word is not None and shown != stored:
                raise PageError(name, line, f"a sentence saying {word.group(0)!r} shows {path} "
                                f"as {shown}, stored as {stored}: show it as stored "
                                f'(tv("{path}", "exact")) or drop {word.group(0)!r}')
            other, other_stored = seen.setdefault(shown, (path, stored))
            if isinstance(value, float) and other_stored != stored:
                raise PageError(name, line, f"a sentence shows {other} and {path} both as "
                                f"{shown}, stored as {other_stored} and {stored}: show them with "
                                "the figures that tell them apart (fixed6, exact)")


def _sentences(source: str) -> Iterator[tuple[int, str]]:
    """``(offset, sentence)`` of the page's prose, the rest blanked (offsets kept)."""
    text = _NOT_PROSE.sub(lambda block: re.sub(r"[^\n]", " ", block.group(0)), source)
    start = 0
    for end in _SENTENCE_END.finditer(text):
        yield start, text[start:end.start()]
        start = end.end()
    yield start, text[start:]
