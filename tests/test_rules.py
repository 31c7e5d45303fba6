"""The Trace page's list of reader rules (tracefile/rules.py) and the reader's own error
messages stay in step: every message the reader can raise belongs to a documented rule, and
every documented rule is enforced by a message the reader raises."""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

import pytest
from paths import ROOT

from diagrams.format import number_tokens
from tracefile.rules import LIMITS, RULES

READER = ("tracefile/frame.py", "tracefile/parser.py", "tracefile/values.py")
RAISERS = {"TraceError", "ValueProblem", "error"}
#: Messages that only wrap another one (a record's kind in front, an expectation after).
WRAPPERS = {"{}: {}", "{}=… here ({})"}


def template(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}"
                       for part in node.values)
    return None


def messages(files: tuple[str, ...] = READER, root: Path = ROOT) -> set[str]:
    """The message template of every error raised in ``files`` (the first string argument
    that is a message, not a path or a line)."""
    found = set()
    for name in files:
        for node in ast.walk(ast.parse((root / name).read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", None)
            if func not in RAISERS:
                continue
            texts = [t for t in map(template, node.args) if t and not t.startswith("<")]
            if texts and texts[0] not in WRAPPERS:
                found.add(texts[0])
    return found


def documented() -> set[str]:
    return {message for rule in RULES for message in rule.messages}


def test_every_message_of_the_reader_belongs_to_a_documented_rule() -> None:
    assert messages() - documented() == set()


def test_every_documented_rule_is_enforced() -> None:
    assert documented() - messages() == set()
    assert all(rule.messages for rule in RULES)


def test_the_rules_hold_no_digits_and_name_only_known_limits() -> None:
    for rule in RULES:
        assert not number_tokens(rule.text), rule.text
    assert all(isinstance(value, int) and value > 0 for value in LIMITS.values())


def test_the_page_spells_every_limit_in_words() -> None:
    from sitebuild.page_context import trace_rules

    texts = trace_rules()
    assert len(texts) == len(RULES)
    for text in texts:
        assert not number_tokens(text) and not any(name in text for name in LIMITS), text
    assert any("ten thousand records" in text for text in texts)


def test_a_new_undocumented_check_is_caught(tmp_path: Path) -> None:
    reader = tmp_path / "tracefile"
    reader.mkdir()
    for name in READER:
        text = (ROOT / name).read_text(encoding="utf-8")
        if name.endswith("values.py"):
            text += '\n\ndef parse_odd(text):\n    raise ValueProblem("odd value", "x", text)\n'
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert messages(READER, tmp_path) - documented() == {"odd value"}


@pytest.mark.slow
def test_the_trace_page_lists_every_rule_and_every_invariant(built_site: Path) -> None:
    from sitebuild.page_context import trace_rules
    from tracefile import SCHEMAS

    page = html.unescape(re.sub(r"<[^>]+>", "", (built_site / "trace.html").read_text(
        encoding="utf-8")))
    for text in trace_rules():
        assert " ".join(text.split()) in " ".join(page.split()), text
    for schema in SCHEMAS.values():
        assert schema.invariants
        for invariant in schema.invariants:
            assert invariant.text in page, invariant.text
