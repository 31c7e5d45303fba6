"""Trace values (docs/trace.md, "Values"): one lexer and one writer per kind (int, float,
vector, shape, bool, name, names, word, paths).

Contract: ``parse_value(kind, text)`` returns the typed value or raises ``ValueProblem``
(what was wrong, what the grammar expects); the parser turns that into a located TraceError.
``write_value(kind, value)`` is its inverse, the one way a number or shape becomes trace text.
Every check is a linear scan or an anchored regex without nested quantifiers, so a 10 MB value
costs milliseconds, and no Python exception other than ValueProblem leaves this module.
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from collections.abc import Callable
from typing import Any


class ValueProblem(Exception):
    """A value that does not match its type; ``text`` is the offending token."""

    def __init__(self, problem: str, expected: str, text: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.expected = expected
        self.text = text


INT_RE = re.compile(r"0|[1-9][0-9]*")
FLOAT_RE = re.compile(r"-?[0-9]+\.[0-9]+|-?[0-9]+(?:\.[0-9]+)?e[+-][0-9]+")
# Looser than the grammar, only to tell an overflow such as 1e999 from other bad floats.
NUMBER_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
NOT_IN_VECTOR_RE = re.compile(r"[^0-9.e+\-,]")
WORD_RE = re.compile(r"[a-z][a-z-]*")
# The grammar's name excludes whitespace, "=", ",", "[" and "]". Control characters and the
# two non-characters U+FFFE/U+FFFF are excluded too: XML (SVG, HTML) cannot carry them at all,
# so no escaping downstream could make such a name displayable.
NAME_RE = re.compile(r"[^\s=,\[\]\x00-\x1f\x7f-\x9f\ufffe\uffff]+")
#: A value path (docs/trace.md, "Addressing a value"); ``tracefile.value_paths`` resolves it.
PATH_RE = re.compile(
    r"(?:(?P<trace>[a-z][a-z0-9-]{0,80}-v[1-9][0-9]{0,3}):)?"
    r"(?P<kind>[A-Z][A-Z-]*)(?:\[(?P<key>[^\[\]]{1,64})\])?"
    r"\.(?P<field>[a-z][a-z-]*)(?:\[(?P<index>0|[1-9][0-9]{0,8})\])?"
)
#: Longer paths are rejected before the regex runs.
MAX_PATH = 200
#: How a trace writes a value that overflowed (with its sign): the largest finite float.
OVERFLOWED = sys.float_info.max

#: A shape dimension needs at most this many digits; more is certainly corrupt and would make
#: int() slow (or raise) on a 10 MB digit string.
MAX_INT_DIGITS = 18
#: Names label diagrams and pages; longer ones are certainly not parameter names (and Graphviz
#: fails on labels of some ten thousand characters).
MAX_NAME = 200
#: repr() of a float64 is at most 24 characters ("-2.2250738585072014e-308").
MAX_FLOAT_CHARS = 32

INT_EXPECTED = 'an int ("0" or digits without a leading zero)'
FLOAT_EXPECTED = "a finite float written as Python's repr() writes it (e.g. -2.25, 2e-06, 1.0)"


def parse_int(text: str) -> int:
    if not INT_RE.fullmatch(text):
        raise ValueProblem("bad int", INT_EXPECTED, text)
    if len(text) > MAX_INT_DIGITS:
        raise ValueProblem("int too large", f"at most {MAX_INT_DIGITS} digits", text)
    return int(text)


def parse_float(text: str) -> float:
    lowered = text.lower().lstrip("+-")
    if lowered in ("nan", "inf", "infinity"):
        raise ValueProblem("NaN or infinity is not allowed", FLOAT_EXPECTED, text)
    if len(text) > MAX_FLOAT_CHARS:
        raise ValueProblem("bad float (too long)", FLOAT_EXPECTED, text)
    if NUMBER_RE.fullmatch(text) and not math.isfinite(float(text)):
        raise ValueProblem("float overflows to infinity", FLOAT_EXPECTED, text)
    if not FLOAT_RE.fullmatch(text):
        raise ValueProblem("bad float", FLOAT_EXPECTED, text)
    value = float(text)
    shortest = repr(value)
    if shortest != text:
        raise ValueProblem(
            "float not in shortest round-trip form", f"{shortest!r} (Python's repr)", text
        )
    return value


def parse_bool(text: str) -> bool:
    if text == "true":
        return True
    if text == "false":
        return False
    raise ValueProblem("bad bool", '"true" or "false"', text)


def parse_name(text: str) -> str:
    if len(text) > MAX_NAME:
        raise ValueProblem(f"name too long ({len(text)} characters)",
                           f"a name of at most {MAX_NAME} characters", text)
    if not NAME_RE.fullmatch(text):
        raise ValueProblem(
            "bad name",
            'one or more characters other than whitespace, control characters, "=", ",", '
            '"[" and "]"',
            text,
        )
    return text


def parse_names(text: str) -> tuple[str, ...]:
    return tuple(parse_name(part) for part in text.split(","))


def parse_paths(text: str) -> tuple[str, ...]:
    """Value paths of the same trace, separated by ``;`` (``ARM[a].final-loss;CORPUS.unigram``)."""
    paths = tuple(text.split(";"))
    for path in paths:
        if len(path) > MAX_PATH or not (match := PATH_RE.fullmatch(path)) or match["trace"]:
            raise ValueProblem("bad paths", 'value paths of this trace separated by ";" such as '
                               "CORPUS.unigram;ARM[a].final-loss", path)
    return paths


def parse_word(text: str) -> str:
    if not WORD_RE.fullmatch(text):
        raise ValueProblem("bad word", "a word [a-z][a-z-]*", text)
    return text


def _bracketed(text: str, what: str, example: str) -> list[str]:
    if len(text) < 3 or text[0] != "[" or text[-1] != "]":
        raise ValueProblem(f"bad {what}", f'"[" element ("," element)* "]" such as {example}', text)
    return text[1:-1].split(",")


def parse_vector(text: str) -> tuple[float, ...]:
    return tuple(parse_float(part) for part in _bracketed(text, "vector", "[2.0,-1.0]"))


def parse_shape(text: str) -> tuple[int, ...]:
    return tuple(parse_int(part) for part in _bracketed(text, "shape", "[2,2]"))


def check_vector_characters(text: str) -> None:
    """Raise for the first element of bracketed vector ``text`` holding a character no float
    can hold, so the length check that follows never blames a malformed vector's length."""
    bad = NOT_IN_VECTOR_RE.search(text, 1, len(text) - 1)
    if bad is None:
        return
    start = text.rfind(",", 0, bad.start()) + 1 or 1
    end = text.find(",", bad.start())
    parse_float(text[start : end if end >= 0 else len(text) - 1])


def vector_length(text: str) -> int:
    """How many elements a vector token holds, counted without parsing them.

    Lets the parser reject a vector of the wrong length (e.g. a 10 MB line) in one C-speed scan
    before converting millions of floats.
    """
    return text.count(",") + 1


PARSERS: dict[str, Callable[[str], Any]] = {
    "int": parse_int,
    "float": parse_float,
    "vector": parse_vector,
    "shape": parse_shape,
    "bool": parse_bool,
    "name": parse_name,
    "names": parse_names,
    "word": parse_word,
    "paths": parse_paths,
}


def parse_value(kind: str, text: str) -> Any:
    """Parse ``text`` as a value of grammar type ``kind``; raises ValueProblem."""
    return PARSERS[kind](text)


def is_int(value: object) -> bool:
    """An integer, numpy's included, that is not a bool (``True`` is an ``Integral`` to Python,
    but never a count, a size or a seed): the one test of "a whole number" of the project."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """A real number, numpy's included, that is not a bool: the one test of "a number"."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def trace_repr(value: Any) -> str:
    """Write a typed value back exactly as the trace stores it (the inverse of parse_value).

    Exact because the parser only accepts floats already in repr() form: ``(1.0, -3.25)`` →
    ``"[1.0,-3.25]"``, a shape ``(2, 2)`` → ``"[2,2]"``, names → ``"a,b"``, ``True`` → ``"true"``.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple):
        if value and all(isinstance(item, str) for item in value):
            return ",".join(value)
        return "[" + ",".join(trace_repr(item) for item in value) + "]"
    return str(value)


def _write_float(value: Any) -> str:
    number = float(value)
    if not math.isfinite(number):
        raise ValueProblem(f"non-finite float {number!r}", FLOAT_EXPECTED, repr(number))
    return repr(number)


def _write_int(value: Any) -> str:
    if not is_real(value) or int(value) != value or int(value) < 0:
        raise ValueProblem(f"not a non-negative int: {value!r}", INT_EXPECTED, repr(value))
    return str(int(value))


def _write_bool(flag: Any) -> str:
    # numpy's bool_ is not a bool; anything else (a float, a string) is a mistake upstream.
    if type(flag).__name__ not in ("bool", "bool_"):
        raise ValueProblem(f"not a bool: {flag!r}", '"true" or "false"', repr(flag))
    return "true" if flag else "false"


def _write_items(kind: str, write: Callable[[Any], str], values: Any) -> str:
    items = [write(item) for item in values]
    if not items:
        raise ValueProblem(f"an empty {kind}", f"a {kind} of at least one element", "[]")
    return "[" + ",".join(items) + "]"


def _checked(parse: Callable[[str], Any]) -> Callable[[Any], str]:
    def write(value: Any) -> str:
        text = str(value)
        parse(text)  # the writer accepts exactly what the reader does
        return text

    return write


def _write_paths(values: Any) -> str:
    text = ";".join(values)
    parse_paths(text)
    return text


def _write_names(values: Any) -> str:
    names = [_checked(parse_name)(name) for name in values]
    if not names:
        raise ValueProblem("an empty names list", "at least one name", "")
    return ",".join(names)


WRITERS: dict[str, Callable[[Any], str]] = {
    "int": _write_int,
    "float": _write_float,
    "vector": lambda values: _write_items("vector", _write_float, values),
    "shape": lambda values: _write_items("shape", _write_int, values),
    "bool": _write_bool,
    "name": _checked(parse_name),
    "names": _write_names,
    "word": _checked(parse_word),
    "paths": _write_paths,
}


def write_value(kind: str, value: Any) -> str:
    """Write ``value`` as a trace value of grammar type ``kind`` (the inverse of
    ``parse_value``); raises ValueProblem for what the reader would reject (NaN, an empty
    vector, a name with a space). The engine's trace and learner report both write through it.
    """
    return WRITERS[kind](value)
