"""The audit's rule for verdict words (sitebuild/gates/audit.py): a page may show supports,
qualifies, contradicts or inconclusive only as a traced value, as a verdict term where it
defines the vocabulary, or inside a claim's declared rule, each exactly as rendered."""

from __future__ import annotations

import pytest
from paths import RECORDS_DIR

from diagrams.format import traced
from diagrams.words import claim_changes, claim_rule, verdict_term
from sitebuild.gates.audit import audit_page, rendered_terms
from tracefile import SCHEMAS, TraceSet, load_trace
from tracefile.schemas.gradient_claims import CLAIMS as GRADIENT_CLAIMS
from tracefile.schemas.stream_claims import CLAIMS

TRACE_ID = "residual-stream-v4"


def page(body: str) -> str:
    return ('<html><head><title>Lab</title></head><body><article class="md-content__inner">'
            f"\n{body}\n</article></body></html>\n")


@pytest.fixture(scope="module")
def traces() -> TraceSet:
    return TraceSet({TRACE_ID: load_trace(RECORDS_DIR / SCHEMAS[TRACE_ID].file_name,
                                          SCHEMAS[TRACE_ID])}, TRACE_ID)


def audit(traces: TraceSet, body: str) -> list[str]:
    return [f.message for f in audit_page("labs/lab.html", page(body), traces,
                                          citations=rendered_terms())]


def test_a_traced_verdict_passes(traces: TraceSet) -> None:
    shown = traced(traces, "CLAIM[deep-plain-fails].verdict")
    assert audit(traces, f"<p>The verdict: <em>{shown}</em>.</p>") == []


@pytest.mark.parametrize("text", ["supports", "Qualifies.", "this contradicts it",
                                  "INCONCLUSIVE"])
def test_a_typed_verdict_word_is_a_finding(traces: TraceSet, text: str) -> None:
    (message,) = audit(traces, f"<p>Verdict: <em>{text}</em></p>")
    assert message.startswith("untraced verdict") and text.split()[-1].strip(".") in message


def test_a_verdict_word_a_reader_sees_in_an_attribute_is_a_finding(traces: TraceSet) -> None:
    (message,) = audit(traces, '<p><abbr title="this supports it">claim</abbr></p>')
    assert "untraced verdict 'supports' in the title attribute" in message


def test_verdict_terms_and_rules_pass_exactly_as_rendered(traces: TraceSet) -> None:
    rule = claim_rule(CLAIMS[0])
    assert "supports" in rule and "contradicts" in rule
    assert audit(traces, f"<p>A result {verdict_term('supports')} a claim.</p>"
                         f"<ul><li>{rule}</li></ul>") == []


CHANGED = next(claim for claim in GRADIENT_CLAIMS if claim.changes)


def test_an_earlier_rule_passes_exactly_as_its_changelog_renders_it(traces: TraceSet) -> None:
    (change,) = claim_changes(CHANGED)
    assert "<code>" in change and CHANGED.changes[0].verdict in change
    assert audit(traces, f"<ul><li>{change}</li></ul>") == []


@pytest.mark.parametrize("html", [
    str(claim_changes(CHANGED)[0]).replace(
        f"It gave <em>{CHANGED.changes[0].verdict}", "It gave <em>qualifies"),
    '<dfn class="verdict-term">supports it</dfn>',
    '<span class="claim-rule" data-claim="deep-plain-fails">It supports the claim.</span>',
    str(claim_rule(CLAIMS[0])).replace("supports when", "supports whenever"),
])
def test_look_alikes_of_terms_and_rules_are_audited(traces: TraceSet, html: str) -> None:
    messages = audit(traces, f"<p>{html}</p>")
    assert messages and all("not rendered by the site" in m for m in messages), messages


def test_a_verdict_term_must_be_a_verdict() -> None:
    with pytest.raises(ValueError, match="not one of"):
        verdict_term("supported")
