"""Tests for the diagram check of the audit (sitebuild/gates/figures.py).

Each inline diagram must read exactly like the diagram re-rendered from the trace, so a label
swapped for another *traced* value, a number added to a `<desc>` or a retitled diagram is
reported; text-free icons pass and an unregistered SVG with text is reported. Needs `dot`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from site_support import published_traces

from diagrams.errors import RenderError
from diagrams.svg import render_diagram
from sitebuild.gates import Finding
from sitebuild.gates.audit import audit_page, audit_site
from sitebuild.gates.figures import ExpectedDiagrams
from tracefile import Trace, TraceSet, parse_trace
from tracefile.schemas import CHAPTER_TRACE

STACK_LABEL = "[0.0078125, −0.00390625]"  # STACK[4].plain, exact, in the stack diagram


def page(body: str) -> str:
    return ('<html><body><article class="md-content__inner md-typeset">\n'
            f"{body}\n</article></body></html>\n")


def audit(trace: Trace, body: str, diagrams: ExpectedDiagrams | None = None) -> list[Finding]:
    return audit_page("index.html", page(body), trace, diagrams)


@pytest.fixture(scope="module")
def stack_svg(trace: Trace) -> str:
    svg = render_diagram("stack", trace)
    # 0.75 is traced and even shown elsewhere in this diagram: membership is no proof.
    assert STACK_LABEL in svg and "0.75" in svg
    return svg


def test_every_registered_diagram_passes(golden_traces: TraceSet) -> None:
    from diagrams.svg import DIAGRAMS, diagram_trace

    body = "\n".join(render_diagram(name, diagram_trace(name, golden_traces))
                     for name in DIAGRAMS)
    assert audit(golden_traces, body) == []


def test_a_diagram_whose_trace_was_not_supplied_is_a_finding_not_a_crash(trace: Trace) -> None:
    from diagrams.svg import DIAGRAM_TRACE

    name = next(iter(DIAGRAM_TRACE))  # a diagram of another trace than the chapter's
    items = ExpectedDiagrams(trace).items(name)
    assert isinstance(items, str) and f"draws {DIAGRAM_TRACE[name]}, which was not" in items


def test_label_swapped_for_another_traced_value_is_reported(trace: Trace,
                                                            stack_svg: str) -> None:
    assert "0.75" in trace.text  # STACK-CONFIG residual-factor: traced, just not here
    findings = audit(trace, stack_svg.replace(STACK_LABEL, "[0.75, −0.00390625]"))
    assert len(findings) == 1, findings
    message = findings[0].message
    assert "diagram 'stack'" in message and "0.75" in message and STACK_LABEL in message
    line = page(stack_svg).splitlines().index(
        next(x for x in page(stack_svg).splitlines() if STACK_LABEL in x)) + 1
    assert findings[0].line == line


def test_number_added_to_desc_is_reported(trace: Trace, stack_svg: str) -> None:
    tampered = re.sub(r"(<desc[^>]*>)", r"\g<1>After 4 layers: ", stack_svg, count=1)
    findings = audit(trace, tampered)
    assert len(findings) == 1 and "<desc>" in findings[0].message, findings


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("</svg>", '<text x="1" y="1">0.0078125</text></svg>', "is not in the diagram"),
        ("</svg>", '<g aria-label="0.5"></g></svg>', "@aria-label"),
        ("<g ", '<foreignObject><p>0.42</p></foreignObject><g ', "<p>"),
    ],
    ids=["extra-text", "extra-label", "foreign-object"],
)
def test_added_text_is_reported(trace: Trace, stack_svg: str, old: str, new: str,
                                expected: str) -> None:
    findings = audit(trace, stack_svg.replace(old, new, 1))
    assert len(findings) == 1 and expected in findings[0].message, findings


def test_removed_label_is_reported(trace: Trace, stack_svg: str) -> None:
    tampered = re.sub(r"<text[^>]*>" + re.escape(STACK_LABEL) + "</text>", "", stack_svg)
    assert tampered != stack_svg
    findings = audit(trace, tampered)
    assert len(findings) == 1 and "is missing" in findings[0].message, findings


def test_a_diagram_without_its_name_is_reported(trace: Trace, stack_svg: str) -> None:
    anonymous = stack_svg.replace(' data-diagram="stack"', "")
    findings = audit(trace, anonymous)
    assert len(findings) == 1 and "names no registered diagram" in findings[0].message


def test_unregistered_svg_with_text_is_reported_and_icons_pass(trace: Trace) -> None:
    icon = '<svg viewBox="0 0 24 24"><path d="M0 0h24v24H0z"/></svg>'
    assert audit(trace, icon) == []
    findings = audit(trace, '<svg><text>0.0078125</text></svg>')
    assert len(findings) == 1 and "names no registered diagram" in findings[0].message


def test_a_diagram_that_cannot_be_rendered_is_reported(trace: Trace, stack_svg: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dot(dot_text: str, where: str) -> str:
        raise RenderError(where, None, "Graphviz 'dot' not found on PATH")

    monkeypatch.setattr("diagrams.svg.run_dot", no_dot)
    findings = audit(trace, stack_svg)
    assert len(findings) == 1 and "cannot be re-rendered" in findings[0].message, findings


def test_diagram_from_another_trace_is_reported(trace: Trace, stack_svg: str) -> None:
    other = parse_trace(trace.text.replace("branch-factor=-0.25 residual-factor=0.75",
                                           "branch-factor=-0.5 residual-factor=0.5"))
    findings = audit(other, stack_svg)
    assert findings and all("diagram 'stack'" in f.message for f in findings)


# --- the real site ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pattern", "replace", "expected"),
    [
        # The first occurrence inside a diagram (the stack table shows the value too).
        (r'(<svg[^>]*data-diagram="stack"(?:(?!</svg>).)*?)' + re.escape(STACK_LABEL),
         r"\g<1>[0.75, −0.00390625]", "0.75"),
        (r'(<desc id="stack-desc">)', r"\g<1>Four 4 ", "<desc>"),
        (r'(<svg[^>]*residual-diagram.*?<text[^>]*>)[^<]*\d[^<]*(</text>)',
         r"\g<1>0.4242\g<2>", "0.4242"),
    ],
    ids=["traced-value-swap", "desc", "any-label"],
)
def test_real_site_changed_diagram_is_reported(site_copy: Path, drawn: dict[str, str],
                                               pattern: str, replace: str, expected: str
                                               ) -> None:
    site = site_copy
    html = (site / "index.html").read_text(encoding="utf-8")
    new, count = re.subn(pattern, replace, html, count=1, flags=re.S)
    assert count == 1, pattern
    (site / "index.html").write_text(new, encoding="utf-8")
    findings = audit_site(site, published_traces(site, CHAPTER_TRACE), rendered=drawn)
    assert len(findings) == 1, findings
    assert "diagram '" in findings[0].message and expected in findings[0].message


def test_a_diagram_whose_trace_was_not_supplied_names_the_trace_it_draws(
        golden_traces: TraceSet) -> None:
    from diagrams.svg import DIAGRAMS, diagram_trace_id

    lab = TraceSet({"gradient-flow-v4": golden_traces.traces["gradient-flow-v4"]},
                   "gradient-flow-v4")
    chapter_diagram = next(n for n in DIAGRAMS if diagram_trace_id(n) == CHAPTER_TRACE)
    found = ExpectedDiagrams(lab).items(chapter_diagram)
    assert found == f"<diagram {chapter_diagram}>: draws {CHAPTER_TRACE}, which was not supplied"
