"""The trace contract: grammar, value lexers, record schemas, parser and value paths.

A trace is the only thing the engine hands the site. This package declares it once: the engine's
writer and the site's parser both read the same declarations, and it imports nothing else of
the project (numpy aside), so either side can depend on it without depending on the other.

Modules: ``errors`` (``LocatedError``, ``TraceError``, ``TracePathError``); ``frame``
(decoding, lines, header and footer); ``values`` (one lexer and one writer per value kind);
``schema`` (record declarations) and ``schemas/`` (one module per trace, and the labs'
NUMERICS record); ``parser`` (text → ``Trace``); ``trace`` (``Trace``, ``TraceSet``);
``value_paths`` (one index per trace); ``writer`` (results → text, for the engine);
``rules`` (the reader's rules and limits); ``claims`` (claims with the rules that decide
them); ``files`` (the one atomic file write).
"""

from tracefile.errors import LocatedError, TraceError, TracePathError, TraceWriteError
from tracefile.parser import load_trace, parse_trace
from tracefile.schemas import SCHEMAS
from tracefile.trace import Trace, TraceSet

__all__ = ["SCHEMAS", "LocatedError", "Trace", "TraceError", "TracePathError", "TraceSet",
           "TraceWriteError", "load_trace", "parse_trace"]
