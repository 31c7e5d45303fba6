"""The build package: everything between a trace and a published site.

Modules by job: ``pipeline`` (engine runs, generated figures and tables, the gates' entry),
``mkdocs_run`` (the MkDocs phase), ``publish`` (atomic writes and the folder swap), ``hook``
and ``page_render`` (the MkDocs hook: pages as templates over traces), ``citations``,
``cache`` (content-addressed), ``serve`` (live preview), ``paths`` (file names), ``gates/``
(provenance audit, links, published traces). It reads traces through ``tracefile`` and draws
through ``diagrams``; it never imports ``engine``.
"""
