"""Drawing: parsed traces → Graphviz DOT and SVG diagrams, plots and HTML tables.

Only drawing lives here, and it imports only ``tracefile``. Modules by job:
- text: ``format`` (the one place a traced value becomes display text and its provenance
  span), ``words`` (whole numbers in words), ``claim_reasons`` (the values a verdict was
  decided from, named and traced);
- diagrams: ``dot`` and ``dot_parts`` (the chapter's DOT text), ``dot_decoder`` (the decoder
  block), ``svg`` (DOT → accessible inline SVG);
- charts: ``chart_spec`` (what a chart declares), ``charts_gradient_flow`` and
  ``charts_residual_stream`` (the labs' declarations), ``looks`` (one colour, line style and
  marker per variant), ``charts`` (declarations → plots and values tables), ``plots``
  (matplotlib → inline SVG), ``svg_compact`` (its SVG made light);
- HTML: ``tables`` (+ ``templates/``), ``explorer`` (the gradients lab's explorer),
  ``shown_html`` (HTML a page's script shows, published as a script file);
- ``errors``.
"""
