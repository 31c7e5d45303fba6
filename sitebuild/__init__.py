"""The build, module by module in the order it runs: ``build`` (the phases, ``progress``
printing them, ``build_folder`` its lock, ``interrupts`` and ``processes`` stopping cleanly),
``engine_runs`` (``python -m engine`` per trace, keyed by ``module_sources``), ``cache`` (the
one content key, and the cache), ``up_to_date``, ``generated`` (diagrams, charts and tables),
``render`` (pages into plain Markdown, with ``templates``, ``page_context``, ``citations`` and
``lockfile``), ``generator`` (MkDocs or Zensical), ``gates/``, ``publish`` (the atomic swap) and
``serve`` (the preview); ``paths`` and ``errors`` are shared. It reads traces through
``tracefile`` and draws through ``diagrams``; it never imports ``engine``.
"""
