"""One page of ``docs/`` rendered as a Jinja template, with located one-line errors.

Contract: ``render_page(source, name, context, line_offset)`` renders strictly (undefined names
fail), HTML-escaping, with comments ``<#-- --#>`` so Markdown's ``{#id}`` stays Markdown; any
failure is a ``PageError`` at ``name:LINE`` (front matter counted). ``split_front_matter`` and
``fenced`` (a code block no backtick run inside can close) serve the renderer.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Mapping
from typing import Any

import jinja2
import yaml
from markupsafe import Markup

from tracefile.errors import LocatedError


class PageError(LocatedError):
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



_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)


def split_front_matter(text: str, name: str) -> tuple[dict[str, Any], str, int]:
    """``(front matter, the page after it, lines it took)``; a page without front matter has
    ``({}, text, 0)``. Front matter that is not a YAML mapping is a ``PageError``."""
    found = _FRONT_MATTER.match(text)
    if found is None:
        return {}, text, 0
    try:
        meta = yaml.safe_load(found.group(1) or "") or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = None if mark is None else mark.line + 2
        raise PageError(name, line, f"front matter is not valid YAML: "
                        f"{getattr(err, 'problem', None) or err}") from None
    if not isinstance(meta, dict):
        raise PageError(name, 1, "front matter must be a mapping of keys to values")
    return meta, text[found.end():], text[: found.end()].count("\n")
