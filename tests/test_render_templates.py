"""sitebuild/render.py's templates: one page rendered as a Jinja template, with located errors.

A page's failures must name the page file and its line (front matter included), Markdown's
own syntax must survive the template language, and a code block made from a trace or a
report must not be closable from inside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from sitebuild.page_context import PageError, fenced
from sitebuild.render import render_page, split_front_matter
from tracefile.errors import LocatedError

PAGE = "docs/page.md"


def _divide_by_zero() -> float:
    return 1 / 0


def _located_failure() -> str:
    raise PageError("<page>", None, "unknown diagram 'nowhere' (known: forward)")


GLOBALS: Mapping[str, Any] = {
    "value": "<b>&</b>",
    "record": {"present": 1},
    "boom": _divide_by_zero,
    "located": _located_failure,
}


def render(source: str, offset: int = 0) -> str:
    return render_page(source, PAGE, GLOBALS, offset)


@pytest.mark.parametrize(
    ("source", "offset", "line", "fragment"),
    [
        ("ok\n\n\n{{ undefined_name }}\n", 0, 4, "undefined name or attribute"),
        ("ok\n{{ record.absent.deeper }}\n", 0, 2, "absent"),
        ("ok\n{% if %}\n", 0, 2, ""),
        ("ok\n{{ boom() }}\n", 0, 2, "ZeroDivisionError: division by zero"),
        ("\n{{ located() }}", 0, 2, "unknown diagram 'nowhere' (known: forward)"),
        # The front matter's lines count, for render failures and syntax errors alike.
        ("ok\n{{ undefined_name }}\n", 5, 7, "undefined_name"),
        ("{% for %}\n", 3, 4, ""),
        # A number the page computes, folded by Jinja or not, fails at its expression's line.
        ("ok\n\n{{ 6 * 7 }}\n", 0, 3, "shows the number 42, computed by the page"),
        ("ok\n{{ 1.5 }}\n", 2, 4, "shows the number 1.5"),
        ("ok\n{{ record.present }}\n", 0, 2, "shows the number 1"),
    ],
)
def test_every_failure_names_the_page_and_line(source: str, offset: int, line: int,
                                               fragment: str) -> None:
    with pytest.raises(PageError) as caught:
        render(source, offset)
    err = caught.value
    assert isinstance(err, LocatedError)
    assert (err.path, err.line) == (PAGE, line)
    assert str(err).startswith(f"{PAGE}:{line}: ")
    assert fragment in err.message and "\n" not in str(err)
    assert "<page>" not in str(err)  # a global's own placeholder path never shows


def test_line_numbers_count_the_front_matter() -> None:
    raw = "---\ntitle: x\n---\n\nbody\n{{ nope }}\n"
    meta, body, offset = split_front_matter(raw, PAGE)
    assert (meta, body, offset) == ({"title": "x"}, "\nbody\n{{ nope }}\n", 3)
    with pytest.raises(PageError) as caught:
        render(body, offset)
    assert caught.value.line == 6  # where `{{ nope }}` is in the page file


def test_markdown_attr_lists_survive_and_page_comments_vanish() -> None:
    out = render("## Heading {#anchor}\n<#-- a note for authors --#>\ntext\n")
    assert out == "## Heading {#anchor}\n\ntext\n"


def test_autoescape_keeps_hostile_values_inert() -> None:
    assert render("{{ value }}") == "&lt;b&gt;&amp;&lt;/b&gt;"


def test_a_page_keeps_its_trailing_newline() -> None:
    assert render("line\n") == "line\n"


def test_a_page_without_front_matter_is_all_body() -> None:
    text = "# Title\n\n---\n\nafter a rule\n"
    assert split_front_matter(text, PAGE) == ({}, text, 0)


def test_front_matter_is_a_mapping_and_the_lines_it_took() -> None:
    text = "---\ntrace: gradient-flow-v4\ntitle: Lab\n---\n# Lab\n"
    assert split_front_matter(text, PAGE) == (
        {"trace": "gradient-flow-v4", "title": "Lab"}, "# Lab\n", 4)
    assert split_front_matter("---\n---\nbody\n", PAGE) == ({}, "body\n", 2)
    assert split_front_matter("---\ntitle: x\n...\nbody\n", PAGE) == ({"title": "x"}, "body\n", 3)


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("---\ntitle: x\nbad: : y\n---\nbody\n", 3, "mapping values are not allowed here"),
    ("---\ntitle: x\n\tindented: y\n---\n", 3, "found character '\\t' that cannot start"),
    ("---\ntitle: x\nbad: [unclosed\nmore: y\n---\n", 4, "expected ',' or ']'"),
])
def test_front_matter_that_is_not_yaml_fails_at_its_line(text: str, line: int,
                                                         problem: str) -> None:
    with pytest.raises(PageError) as caught:
        split_front_matter(text, PAGE)
    err = caught.value
    assert (err.path, err.line) == (PAGE, line)
    assert str(err).startswith(f"{PAGE}:{line}: front matter is not valid YAML: {problem}")
    assert "\n" not in str(err)


@pytest.mark.parametrize("front", ["- a\n- b\n", "just words\n", "42\n"])
def test_front_matter_that_is_not_a_mapping_fails(front: str) -> None:
    with pytest.raises(PageError) as caught:
        split_front_matter(f"---\n{front}---\nbody\n", PAGE)
    assert str(caught.value) == f"{PAGE}:1: front matter must be a mapping of keys to values"


def test_a_code_block_cannot_be_closed_from_inside() -> None:
    hostile = "name=```\n````\n<script>alert(1)</script>"
    block = fenced(hostile, "text")
    fence = block.strip().splitlines()[0].removesuffix("text")
    assert fence == "`" * 5
    assert block.count(fence) == 2
    assert block == f"\n{fence}text\n{hostile}\n{fence}\n"


def test_a_code_block_without_backticks_has_the_shortest_fence() -> None:
    assert fenced("report line\n\n", "text") == "\n```text\nreport line\n```\n"
