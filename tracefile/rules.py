"""Every rule the trace reader enforces, as data: the Trace page lists them from here, and a
test keeps this list and the reader's own error messages in step (tests/test_rules.py).

Contract: ``RULES`` is a tuple of ``Rule``s in the order a reader meets them; each has the
sentence a reader of the Trace page sees (no digits: limits are given by ``LIMITS``, which the
page spells out) and the templates of the error messages that enforce it, written with ``{}``
for each formatted part, exactly as the messages are built in ``frame``, ``parser`` and
``values``. Every such message belongs to exactly one rule, and every rule to at least one
message.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracefile.frame import MAX_RECORDS
from tracefile.parser import MAX_TRACE_BYTES
from tracefile.values import MAX_FLOAT_CHARS, MAX_INT_DIGITS, MAX_NAME


@dataclass(frozen=True)
class Rule:
    text: str
    messages: tuple[str, ...]


#: The limits the rules mention, for the page to spell out.
LIMITS = {"trace-mebibytes": MAX_TRACE_BYTES // (1024 * 1024), "trace-records": MAX_RECORDS,
          "name-characters": MAX_NAME,
          "int-digits": MAX_INT_DIGITS, "float-characters": MAX_FLOAT_CHARS}

RULES = (
    Rule("A trace is a regular file of at most trace-mebibytes mebibytes, checked before it is "
         "read; a device, a pipe or a folder is refused.",
         ("not a regular file", "trace file too large ({} bytes)",
          "trace file too large (it grew while being read)", "cannot read trace: {}",
          "cannot parse a {}")),
    Rule("It is UTF-8 text without a byte order mark, with LF line endings, no blank line and a "
         "final newline.",
         ("not UTF-8: invalid byte 0x{} at column {}", "not encodable as UTF-8 (lone surrogate)",
          "empty file", "byte order mark before the header", "no final newline (truncated file?)",
          "CRLF line ending", "blank line")),
    Rule("The first line is the header of a declared trace and version, the last its footer, "
         "and nothing follows the footer; between them are at most trace-records records.",
         ("too many records: more than {} between the header and the footer", "missing header",
          "unsupported trace version {}",
          "unsupported trace version {} in the footer", "text after the footer",
          "missing footer after the last line (truncated file?)",
          "header or footer line among the records")),
    Rule("Every line between them is one declared record, in the declared order; a once record "
         "appears exactly once.",
         ("malformed record kind", "unknown record {}", "duplicate record {} (first at line {})",
          "missing record {} before {}",
          "record out of order: {} before {} (which is at line {})")),
    Rule("A record's fields are its declared keys, each once, in the declared order, separated "
         "by single spaces.",
         ("empty field (double or trailing space)", "malformed field", "duplicate key {}",
          "unknown key {}", "extra key {}", "missing key(s) {}")),
    Rule("A keyed record appears once per key value, all its lines together: numeric keys "
         "strictly increasing, word and name keys each once; a record keyed from zero to "
         "another record's value has every key in that range.",
         ("{} records must be contiguous (first at line {})",
          "duplicate {} {}={} (first at line {})", "{} {} out of order",
          "{} {}s must run 0..{} without gaps",
          "missing {} {}={} ({}={})")),
    Rule("Each value has its declared kind: an int of at most int-digits digits, a finite float "
         "in Python's shortest round-trip form of at most float-characters characters, a vector "
         "or shape in brackets, a bool, a word, a name, a list of names or a list of value "
         "paths of the same trace.",
         ("bad int", "int too large", "NaN or infinity is not allowed", "bad float (too long)",
          "float overflows to infinity", "bad float", "float not in shortest round-trip form",
          "bad bool", "bad word", "bad name", "bad paths", "bad {}")),
    Rule("A name is at most name-characters characters long and holds no space, control "
         "character, equals sign, comma or bracket.",
         ("name too long ({} characters)",)),
    Rule("A vector has exactly as many elements as the shape its declaration names.",
         ("{} has {} elements but {} is {} ({} elements)",)),
    Rule("The values agree with each other as the trace's declared invariants require (listed "
         "with each trace above).",
         ("invariant {} does not hold: the left side is {}, the right side {}",)),
    Rule("The engine's writer refuses what the reader would reject: a non-finite float, an empty "
         "vector, a negative or fractional int, a bool that is not a bool.",
         ("non-finite float {}", "an empty {}", "an empty names list", "not a bool: {}",
          "not a non-negative int: {}")),
)
