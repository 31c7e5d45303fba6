"""Text-level checks of a trace: encoding, lines, header and footer (docs/trace.md, "Lines").

Contract: ``decode`` turns str or bytes into text that is valid UTF-8, ``split_lines`` into
LF-terminated, non-blank lines without CR (at most ``MAX_RECORDS`` records between the frame's
two lines), ``identify`` finds the declared schema the header names, and ``check_frame``
ensures its header comes first and its footer last; each raises TraceError at the line of the
first defect.
"""

from __future__ import annotations

import re

from tracefile.errors import TraceError
from tracefile.schema import TraceSchema

FRAME_RE = re.compile(r"TRACE (\S{1,80}) (BEGIN|END)")
#: A trace holds at most this many records (lines between its header and footer). The
#: largest today holds hundreds; the bound keeps what a build does with a trace (pages that
#: list it, the gates that read them) to seconds, and a hostile trace from costing minutes.
MAX_RECORDS = 10_000


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


def split_lines(text: str, path: str, header: str) -> list[str]:
    """The lines of ``text``; ``header`` is what the messages say the first line should be."""
    if text == "":
        raise TraceError(path, 1, "empty file", expected=header)
    if text.startswith("\ufeff"):
        raise TraceError(path, 1, "byte order mark before the header", expected=header)
    if not text.endswith("\n"):
        last = text.count("\n") + 1
        tail = text[text.rfind("\n") + 1 :]
        raise TraceError(path, last, "no final newline (truncated file?)",
                         text=tail, expected="every line, the footer included, to end in LF")
    lines = text[:-1].split("\n")
    if len(lines) - 2 > MAX_RECORDS:
        raise TraceError(path, MAX_RECORDS + 2, f"too many records: more than {MAX_RECORDS} "
                         "between the header and the footer",
                         expected=f"at most {MAX_RECORDS} records")
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            raise TraceError(path, number, "CRLF line ending", text=line,
                             expected="LF line endings only")
        if line == "":
            raise TraceError(path, number, "blank line", expected="one record per line")
    return lines


def identify(first: str, path: str, schemas: dict[str, TraceSchema]) -> TraceSchema:
    """The schema whose header ``first`` is; TraceError for another or no header."""
    match = FRAME_RE.fullmatch(first)
    if match and match.group(2) == "BEGIN" and match.group(1) in schemas:
        return schemas[match.group(1)]
    want = _one_of(schemas)
    if match and match.group(2) == "BEGIN":
        raise TraceError(path, 1, f"unsupported trace version {match.group(1)!r}",
                         text=first, expected=want)
    raise TraceError(path, 1, "missing header", text=first, expected=want)


def _one_of(schemas: dict[str, TraceSchema]) -> str:
    headers = [repr(schema.header) for schema in schemas.values()]
    return headers[0] if len(headers) == 1 else "one of " + ", ".join(headers)


def check_frame(lines: list[str], path: str, schema: TraceSchema) -> None:
    """Header first, footer last, nothing after the footer."""
    header, footer = schema.header, schema.footer
    if lines[0] != header:
        identify(lines[0], path, {schema.trace_id: schema})
    try:
        end = lines.index(footer, 1)
    except ValueError:
        end = -1
    if end == len(lines) - 1:
        return
    if end >= 0:
        raise TraceError(path, end + 2, "text after the footer", text=lines[end + 1],
                         expected="end of file after " + repr(footer))
    last = lines[-1]
    if len(lines) > 1 and FRAME_RE.fullmatch(last) and last.endswith(" END"):
        raise TraceError(path, len(lines), f"unsupported trace version {last.split()[1]!r} "
                         "in the footer",
                         text=last, expected=repr(footer))
    raise TraceError(path, len(lines), "missing footer after the last line (truncated file?)",
                     text=last, expected=repr(footer))
