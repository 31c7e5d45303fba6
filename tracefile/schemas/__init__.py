"""Every trace the project publishes, declared once: ``SCHEMAS`` maps a trace id to its schema.

A new trace is one new module here and one line below; the engine's writer, the parser, the
build and the Trace page all take the list from ``SCHEMAS``. ``CHAPTER_TRACE`` is the chapter's
trace: the one the engine's report describes, unqualified value paths on a page refer to, and
diagrams draw unless they name another. ``numerics`` declares the ``NUMERICS`` record the
labs' traces begin with: which kernels computed them.
"""

from __future__ import annotations

from tracefile.schema import TraceSchema
from tracefile.schemas import gradient_flow, residual_connections, residual_stream

SCHEMAS: dict[str, TraceSchema] = {
    schema.trace_id: schema for schema in (residual_connections.SCHEMA, gradient_flow.SCHEMA,
                                           residual_stream.SCHEMA)
}

CHAPTER_TRACE = residual_connections.SCHEMA.trace_id
