"""Drawing: parsed traces → Graphviz DOT and SVG diagrams, plots and HTML tables.

Only drawing lives here, and it imports only ``tracefile``: ``format`` (the one place a traced
value becomes display text and its provenance span), ``dot`` and ``dot_parts`` (DOT text),
``svg`` (DOT → accessible inline SVG), ``tables`` (+ ``templates/``), ``errors``.
"""
