"""Display formatting: the ONLY place the site turns traced values into text.

Contract:
- ``format_value(value, fmt)``: ``"exact"`` (shortest decimal, no exponent, integral floats
  without ".0": 2.0 → "2", -2.25 → "−2.25", 2e-06 → "0.000002") or ``"fixed6"``
  (``f"{x:.6f}"``) or ``"sig4"`` (four significant figures, trailing zeros dropped unless the
  value rounds to a whole number it is not: 0.9999988 → "1.000") or ``"sci"`` (three
  significant digits and a power of ten in superscript, for values like a gradient check's
  worst error: 5.869e-10 → "5.87 × 10⁻¹⁰"); minus is U+2212; vectors and shapes "[2, −1]";
  ints "4"; bools "true"/"false"; names as-is; names lists "a, b".
- ``traced(traces, path, fmt)``: the HTML span that carries a value's provenance;
  ``traced_range(traces, path, fmt)`` a list of several numbers (a value per seed) as its least
  and largest element, each traced (``low–high``; one where both show the same; in words
  where every value overflowed), a single value that overflowed (a seed that diverged) as
  "diverged", any other value as ``traced`` shows it.
- ``number_tokens(text)``: the one definition of "a number in text" (used by the audit).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from typing import Any

from markupsafe import Markup, escape

from diagrams.errors import RenderError
from tracefile import Trace, TraceSet
from tracefile.values import OVERFLOWED, trace_repr

FORMATS = ("exact", "fixed6", "sig4", "sci", "percent")
#: A yes/no value's two words, for true and for false ("moved/stayed"): a format of its own.
WORDS_FORMAT = re.compile(r"[a-z][a-z ]*/[a-z][a-z ]*")
#: A value shown in at most this many characters stays on one line, like a number: a short
#: list ("[2, 2, −1, −1]") or name broken in two reads as two values.
WHOLE_UP_TO = 16
MINUS = "\u2212"

# A number not glued to a word: "float64", "v1", "UTF-8", "h2" and "stack.0.branch" hold none.
# The look-behind covers the sign too, so "UTF-8" yields neither "-8" nor "8"; the look-aheads
# stop "2.25x" from yielding a shorter number by backtracking. Dotted runs ("1.6.1", a version)
# are one number: a reader takes them for one, so they need a source like any other. A leading-dot
# number (".5", "−.5") counts: a reader takes it for one. \d is any decimal digit, so
# full-width or Arabic-Indic digits are numbers too.
NUMBER_RE = re.compile(
    r"(?<![\w.\-\u2212])[-\u2212]?(?:\d+(?:\.\d+)*|\.\d+)(?:[eE][-+\u2212]?\d+)?"
    r"(?![\w])(?!\.[\dA-Za-z_])"
)

# Every other character Unicode calls a number (categories No and Nl): superscript digits
# ("10³"), fractions ("½"), Roman and circled numerals; with any digits before it, one token.
# Subscript digits are the one exception: they index a variable ("x̄₁"), they count nothing.
_SIGNS = "".join(chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) in ("No", "Nl")
                 and not 0x2080 <= c <= 0x2089)
OTHER_NUMBER_RE = re.compile(rf"\d*[{re.escape(_SIGNS)}]+")

# Characters Markdown, arithmatex, attr_list or emoji could act on if a hostile name sits in a
# page that is still Markdown; as character references they are inert but read the same. Applied
# after HTML escaping, so the set must not hold "&", "#", ";" or the letters and digits that
# escaping's own references are made of.
_INERT = {ord(c): f"&#{ord(c)};" for c in "*_`\\[]{}$~|!:^"}


def format_value(value: Any, fmt: str = "exact") -> str:
    """The text a reader sees for a traced value."""
    if WORDS_FORMAT.fullmatch(fmt):
        if not isinstance(value, bool):
            raise RenderError("<format>", None, f"the format {fmt!r} words a yes or no, not a "
                              f"{type(value).__name__}")
        yes, no = fmt.split("/")
        return yes if value else no
    if fmt not in FORMATS:
        raise RenderError("<format>", None,
                          f"unknown display format {fmt!r}; expected one of {', '.join(FORMATS)}"
                          " or two words for yes and no, as in moved/stayed")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and fmt == "percent":  # a share of exactly none or all
        return _format_float(float(value), fmt)
    if isinstance(value, int):
        return str(value).replace("-", MINUS)
    if isinstance(value, float):
        return _format_float(value, fmt)
    if isinstance(value, str):
        return value
    if isinstance(value, tuple):
        if value and all(isinstance(item, str) for item in value):
            return ", ".join(value)
        return "[" + ", ".join(format_value(item, fmt) for item in value) + "]"
    raise TypeError(f"cannot format a {type(value).__name__} traced value")


def _format_float(value: float, fmt: str) -> str:
    if fmt == "percent":  # a share as a percentage, to four significant figures
        return _format_float(value * 100, "sig4") + "%"
    if fmt == "fixed6":
        text = f"{value:.6f}"
    elif fmt == "sig4":
        # Four significant figures without an exponent (1.262, 0.05477, 2527); a value too
        # large or too small for that reads in scientific notation instead.
        if value != 0 and not 1e-4 <= abs(value) < 1e5:
            return _format_sci(value)
        text = positional(float(f"{value:.4g}"))
        if "." not in text and float(text) != value:
            # Rounded to a whole number, it keeps its figures (0.9999988 → "1.000", not "1"):
            # a bare "1" reads as exactly one.
            text = f"{value:#.4g}".rstrip(".")
            if "e" in text:  # 99999.6 rounds to 1e+05
                return _format_sci(value)
    elif fmt == "sci":
        return _format_sci(value)
    else:
        text = positional(value)
    return text.replace("-", MINUS)


def positional(value: float) -> str:
    """The shortest round-trip digits of ``value`` without an exponent, trailing zeros or a
    bare point: 2.0 → "2", 2e-06 → "0.000002", -0.25 → "-0.25" (repr's digits, so exact)."""
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


#: Digits and minus as superscripts: an exponent (``10⁻³``) that number_tokens does not read.
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _format_sci(value: float) -> str:
    # Superscript exponent digits are not [0-9], so number_tokens sees only the mantissa and
    # the base; both are reproduced by this same function when the audit re-formats the value.
    mantissa, exponent = f"{value:.2e}".split("e")
    power = str(int(exponent)).translate(SUPERSCRIPT)
    # No-break spaces: a list of these may wrap between its items but never inside a number.
    return f"{mantissa}\u00a0×\u00a010{power}".replace("-", MINUS)


def traced(traces: Trace | TraceSet, path: str, fmt: str = "exact", tag: str = "span"
           ) -> Markup:
    """``<span class="tv" data-trace=PATH data-what=WHAT data-format=FMT data-exact=EXACT>DISPLAY
    </span>``,
    with ``data-name`` after FMT when the value is a name (or names), ``data-list`` when it is a
    list of several numbers, each only when it shows in more than ``WHOLE_UP_TO`` characters;
    ``tag`` names another element (a table's ``td``) to carry it.

    PATH is qualified by its trace (``residual-connections-v2:FORWARD.output``) whichever
    trace a page names by default; EXACT is the value as the trace stores it, written only
    when DISPLAY shows it otherwise (rounded, say): the provenance popover shows WHAT, the
    value in words from the trace's schema, above ``PATH = EXACT``. Raises TracePathError for
    an unknown path and RenderError for an unknown format.
    """
    value = traces.resolve(path)
    # A "|" (as in "||h_L||") would split the Markdown table row the span may sit in.
    what = Markup(str(escape(traces.describe(path))).replace("|", "&#124;"))
    path = traces.qualified(path)
    display, exact = escape(format_value(value, fmt)), escape(trace_repr(value))
    if _is_name(value):
        display, exact = _inert(display), _inert(exact)
    # A number never breaks, nor does any value as short as one: a longer name (data-name)
    # may break at a hyphen, a longer list of several values (data-list) after a comma.
    listed = ""
    if len(format_value(value, fmt)) <= WHOLE_UP_TO:
        pass
    elif _is_name(value):
        listed = Markup(" data-name")
    elif isinstance(value, tuple) and len(value) > 1:
        listed = Markup(" data-list")
    stored = "" if exact == display else Markup(' data-exact="{}"').format(exact)
    return Markup(
        '<{tag} class="tv" data-trace="{path}" data-what="{what}" data-format="{fmt}"{listed}'
        "{stored}>{display}</{tag}>"
    ).format(tag=tag, path=path, what=what, fmt=fmt, listed=listed, stored=stored,
             display=display)


def traced_range(traces: Trace | TraceSet, path: str, fmt: str = "exact") -> Markup:
    """A list of numbers by its two ends, each traced (see the module doc)."""
    value = traces.resolve(path)
    if isinstance(value, float) and abs(value) == OVERFLOWED:
        return Markup("diverged")  # a loss past the largest float: its seed diverged
    if not (isinstance(value, tuple) and len(value) > 1
            and all(isinstance(item, float) for item in value)):
        return traced(traces, path, fmt)
    if all(abs(item) == OVERFLOWED for item in value):
        return Markup("overflowed in every seed")
    low, high = (f"{path}[{value.index(end(value))}]" for end in (min, max))
    if format_value(traces.resolve(low), fmt) == format_value(traces.resolve(high), fmt):
        return traced(traces, low, fmt)
    return Markup("{}–{}").format(traced(traces, low, fmt), traced(traces, high, fmt))


def _inert(markup: Markup) -> Markup:
    return Markup(str(markup).translate(_INERT))


def _is_name(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, tuple) and bool(value) and isinstance(value[0], str)
    )


def number_tokens(text: str) -> list[str]:
    """Every number in ``text`` as written ("0.42", "−2.25", "24", "1e-06", "10³", "½"), in
    order."""
    found = [(m.start(), m.group(0)) for m in NUMBER_RE.finditer(text)]
    found += [(m.start(), m.group(0)) for m in OTHER_NUMBER_RE.finditer(text)]
    return [token for _, token in sorted(found)]


def wrappable(text: str) -> Markup:
    """``text`` as inline code that may wrap after an equals sign or a dot (a ``<wbr>``
    there) as well as after a hyphen: a name in a table column a phone makes narrow."""
    return Markup("<code>{}</code>").format(Markup("<wbr>").join(re.split(r"(?<=[=.])", text)))
