"""The build, module by module in the order it runs: ``build`` (the phases; ``progress``,
``build_folder``, ``interrupts`` and ``processes`` around them), ``engine_runs``, ``cache``,
``generated`` (diagrams, charts, tables), ``render`` (with ``page_context``, ``citations``,
``numbering``, ``exactness`` and ``notebooks``), ``generator`` (MkDocs or Zensical, then
``typeset_math``),
``pdf``, ``gates/``, ``publish`` and ``serve`` (with ``preview_server``); ``check`` holds a
built site to the gates and to a rebuild; ``paths`` and ``errors`` are shared.
It never imports ``engine``.
"""
