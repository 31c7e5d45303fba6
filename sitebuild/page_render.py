"""Rendering one page of ``docs/`` as a Jinja template, with located one-line errors.

Role: the template half of the MkDocs hook (``sitebuild/hook.py``), kept apart from
the MkDocs events so that it can be tested without MkDocs.

Contract:
- ``render_page(source, name, context, line_offset)`` renders ``source`` with
  ``StrictUndefined``, HTML autoescaping and comment delimiters ``<#-- --#>`` (so
  Markdown's ``{#id}`` stays Markdown), with ``context`` as globals. Any failure raises
  ``PageError`` whose ``str`` is ``name:LINE: message`` (LINE counted in the page file,
  front matter included through ``line_offset``).
- ``front_matter_lines(raw, markdown)`` is that offset; ``fenced(text, lang)`` is a code
  block no backtick run in ``text`` can close.
- ``HookError`` is a ``LocatedError`` that is also a MkDocs ``PluginError``, so MkDocs'
  own CLI reports it on one line too.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Mapping
from typing import Any

import jinja2
from markupsafe import Markup
from mkdocs.exceptions import PluginError

from tracefile.errors import LocatedError


class HookError(LocatedError, PluginError):
    """A site error raised from a hook event; ``str`` is ``path:line: message``."""

    @classmethod
    def wrap(cls, err: LocatedError) -> HookError:
        """Re-raise a site error from a lower module unchanged in wording."""
        return cls(err.path, err.line, err.message)


class PageError(HookError):
    """A page failed to render; ``path`` is the page file, ``line`` its line."""


def fenced(text: str, lang: str) -> Markup:
    """``text`` as a fenced code block whose fence no run of backticks inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"\n{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}\n")


def make_env() -> jinja2.Environment:
    """The page environment: strict, HTML-escaping, Markdown-friendly comments."""
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
        comment_start_string="<#--",
        comment_end_string="--#>",
    )


def render_page(source: str, name: str, context: Mapping[str, Any], line_offset: int = 0) -> str:
    """Render page ``source`` (called ``name`` in errors) with ``context`` as globals."""
    env = make_env()
    try:
        code = env.compile(source, name=name, filename=name)
        template = env.template_class.from_code(env, code, env.make_globals(dict(context)))
        return template.render()
    except jinja2.TemplateSyntaxError as err:
        raise PageError(name, (err.lineno or 0) + line_offset, err.message or "syntax error") \
            from None
    except Exception as err:  # every failure becomes one located line
        line = _template_line(err, name)
        raise PageError(name, None if line is None else line + line_offset, _describe(err)) \
            from None


def _template_line(err: BaseException, name: str) -> int | None:
    """The page line Jinja's rewritten traceback points at, if any."""
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == name]
    return lines[-1] if lines else None


def _describe(err: Exception) -> str:
    if isinstance(err, LocatedError):
        return err.message
    if isinstance(err, jinja2.UndefinedError):
        return f"undefined name or attribute: {err.message}"
    return f"{err.__class__.__name__}: {err}"


def front_matter_lines(raw: str, markdown: str) -> int:
    """How many source lines MkDocs removed (front matter) before ``markdown``."""
    if markdown and raw.endswith(markdown):
        return raw[: len(raw) - len(markdown)].count("\n")
    return 0
