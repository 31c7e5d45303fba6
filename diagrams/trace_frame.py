"""Text-level checks of a trace: encoding, lines, header and footer (docs/trace.md, "Lines").

Contract: ``decode`` turns str or bytes into text that is valid UTF-8, ``split_lines`` into
LF-terminated, non-blank lines without CR, and ``check_frame`` ensures the v1 header comes
first and the footer last; each raises TraceError at the line of the first defect.
"""

from __future__ import annotations

import re

from diagrams.errors import TraceError
from diagrams.trace_schema import FOOTER, HEADER, VERSION

FRAME_RE = re.compile(r"TRACE (\S{1,80}) (BEGIN|END)")


def decode(data: object, path: str) -> str:
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            start = raw.rfind(b"\n", 0, err.start) + 1
            bad = raw[err.start : err.start + 1].hex()
            shown = raw[max(start, err.start - 80) : err.start + 1]
            raise TraceError(
                path, line, f"not UTF-8: invalid byte 0x{bad} at column {err.start - start + 1}",
                text=repr(shown)[2:-1], expected="UTF-8 text",
            ) from None
    if not isinstance(data, str):
        raise TraceError(path, None, f"cannot parse a {type(data).__name__}",
                         expected="trace text (str) or its UTF-8 bytes")
    try:
        data.encode("utf-8")
    except UnicodeEncodeError as err:
        # A str can hold lone surrogates, which no UTF-8 file (nor HTML page) can.
        line = data.count("\n", 0, err.start) + 1
        raise TraceError(path, line, "not encodable as UTF-8 (lone surrogate)",
                         expected="UTF-8 text") from None
    return data


def split_lines(text: str, path: str) -> list[str]:
    if text == "":
        raise TraceError(path, 1, "empty file", expected=repr(HEADER))
    if text.startswith("\ufeff"):
        raise TraceError(path, 1, "byte order mark before the header", expected=repr(HEADER))
    if not text.endswith("\n"):
        last = text.count("\n") + 1
        tail = text[text.rfind("\n") + 1 :]
        raise TraceError(path, last, "no final newline (truncated file?)",
                         text=tail, expected="every line, the footer included, to end in LF")
    lines = text[:-1].split("\n")
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            raise TraceError(path, number, "CRLF line ending", text=line,
                             expected="LF line endings only")
        if line == "":
            raise TraceError(path, number, "blank line", expected="one record per line")
    return lines


def check_frame(lines: list[str], path: str) -> None:
    """Header first, footer last, nothing after the footer."""
    _check_frame_line(lines[0], HEADER, "BEGIN", path, 1)
    try:
        end = lines.index(FOOTER, 1)
    except ValueError:
        end = -1
    if end == len(lines) - 1:
        return
    if end >= 0:
        raise TraceError(path, end + 2, "text after the footer", text=lines[end + 1],
                         expected="end of file after " + repr(FOOTER))
    last = lines[-1]
    if len(lines) > 1 and FRAME_RE.fullmatch(last) and last.endswith(" END"):
        _check_frame_line(last, FOOTER, "END", path, len(lines))
    raise TraceError(path, len(lines), "missing footer after the last line (truncated file?)",
                     text=last, expected=repr(FOOTER))


def _check_frame_line(line: str, want: str, word: str, path: str, number: int) -> None:
    if line == want:
        return
    match = FRAME_RE.fullmatch(line)
    if match and match.group(2) == word:
        raise TraceError(path, number, f"unsupported trace version {match.group(1)!r}",
                         text=line, expected=f"{VERSION} ({want!r})")
    what = "header" if word == "BEGIN" else "footer"
    raise TraceError(path, number, f"missing {what}", text=line, expected=repr(want))
