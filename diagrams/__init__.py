"""Site side of the residual-connections chapter: trace parser, formatting, diagrams, tables.

Contract (see /work/plan/CONTRACTS.md): the site side reads only the trace — it never imports
``engine`` — and every number it shows is formatted by ``diagrams.format`` from a traced value.
Modules: errors; trace (+ trace_frame, trace_values, trace_schema, trace_paths); format;
dot (+ dot_parts); svg; tables (+ templates/). Other helpers own site_hook and gates/.
"""
