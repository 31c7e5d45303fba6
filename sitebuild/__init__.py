"""The build package: everything between a trace and a published site.

Modules by job:
- the phases before MkDocs: ``pipeline`` (engine runs, generated figures and tables, the
  gates' entry), ``closure`` (what an engine run's cache key covers), ``drawing`` (every
  figure, charts drawn by ``workers`` beside MkDocs), ``cache`` (content-addressed),
  ``freshness`` (the "up to date" key);
- MkDocs: ``mkdocs_run`` (the MkDocs phase), ``hook`` (pages as templates over traces),
  ``site_context`` (what a page's template may use), ``page_render`` (one page, with located
  errors), ``citations``, ``lockfile`` (the versions a page may name);
- after it: ``gates/`` (provenance audit, links, published traces), ``publish`` (atomic
  writes and the folder swap);
- the preview: ``serve`` (live reload), ``warm`` (its memos), ``memo`` (one memo step);
- shared: ``paths`` (file names and build settings), ``errors``, ``tether`` (processes
  that die with the build), ``interrupts`` (SIGTERM and Ctrl-C).
It reads traces through ``tracefile`` and draws through ``diagrams``; it never imports
``engine``.
"""
