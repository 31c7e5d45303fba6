"""Tests for the provenance audit (diagrams/gates/audit.py) and the `run_gates` entry point.

Small synthetic pages pin each rule; the slow tests tamper a copy of a really built site and
prove the audit reports each kind of tampering (and nothing on the untampered site).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import site_support

from diagrams.format import format_value, traced
from diagrams.gates import Finding, run_gates
from diagrams.gates.audit import audit_page, audit_site, diagram_tokens
from diagrams.trace import Trace, parse_trace


@pytest.fixture(scope="module")
def trace() -> Trace:
    return parse_trace(site_support.golden_text(), "golden.trace")


def page(body: str) -> str:
    """A page shaped like Material's, with numbers in the chrome that the audit must ignore."""
    return (
        "<!doctype html>\n<html><head><title>Residual 24</title></head><body>\n"
        '<header class="md-header">Material 9.8</header>\n'
        '<nav class="md-nav">Chapter 24</nav>\n'
        '<article class="md-content__inner md-typeset">\n'
        f"{body}\n"
        "</article>\n<footer>Copyright 2024</footer></body></html>\n"
    )


def svg(*labels: str) -> str:
    texts = "".join(f'<text x="1" y="2">{label}</text>\n' for label in labels)
    return (
        '<svg class="residual-diagram" role="img" viewBox="0 0 10 10">\n'
        f"<title>Four layers</title><desc>Plain and residual stacks</desc>\n{texts}</svg>"
    )


def audit(trace: Trace, body: str) -> list[Finding]:
    return audit_page("index.html", page(body), trace, diagram_tokens(trace))


def clean_body(trace: Trace) -> str:
    return "\n".join([
        '<h1 id="intro">Residual connections<a class="headerlink" href="#intro">¶</a></h1>',
        f"<p>The output is {traced(trace, 'FORWARD.output')} and the plain stack keeps "
        f"{traced(trace, 'STACK[4].plain[0]', 'fixed6')} after the last layer.</p>",
        f"<p>Scaled: {traced(trace, 'SCALED[0.5].output')}; float64, UTF-8, v1, x_1.</p>",
        '<div class="highlight"><pre><span></span><code>y = x + 0.42 * f(3)</code></pre></div>',
        "<p>Call <code>stack(4)</code> or press <kbd>F5</kbd>.</p>",
        '<p><cite class="citation">He et al., 2016</cite></p>',
        svg(format_value(trace.resolve("STACK[4].plain"), "fixed6"), "depth 4", "x + F(x)"),
    ])


def test_clean_page_passes(trace: Trace) -> None:
    assert audit(trace, clean_body(trace)) == []


@pytest.mark.parametrize(
    ("path", "fmt"), [("FORWARD.output", "exact"), ("STACK[4].plain[0]", "fixed6")]
)
def test_changed_traced_value_is_reported(trace: Trace, path: str, fmt: str) -> None:
    right = str(traced(trace, path, fmt))
    shown = format_value(trace.resolve(path), fmt)
    wrong = right.replace(f">{shown}<", ">0.5<")
    assert wrong != right
    findings = audit(trace, clean_body(trace).replace(right, wrong))
    assert len(findings) == 1, findings
    assert path in findings[0].message and "'0.5'" in findings[0].message
    assert findings[0].gate == "audit"


def test_changed_tooltip_is_reported(trace: Trace) -> None:
    right = str(traced(trace, "STACK[4].plain[0]", "fixed6"))
    wrong = right.replace("= 0.0078125", "= 0.0078")
    assert wrong != right
    findings = audit(trace, clean_body(trace).replace(right, wrong))
    assert len(findings) == 1 and "tooltip '" in findings[0].message, findings


def test_unknown_trace_path_is_reported(trace: Trace) -> None:
    body = '<p>See <span class="tv" data-trace="FORWARD.nope" data-format="exact">2</span>.</p>'
    findings = audit(trace, body)
    assert len(findings) == 1 and "FORWARD.nope" in findings[0].message


def test_untagged_number_is_reported_with_page_line_and_context(trace: Trace) -> None:
    body = clean_body(trace) + "\n<p>After training the loss fell to 0.42 in the end.</p>"
    findings = audit(trace, body)
    assert len(findings) == 1, findings
    line = page(body).splitlines().index("<p>After training the loss fell to 0.42 in the end.</p>")
    assert findings[0].line == line + 1
    assert "'0.42'" in findings[0].message and "loss fell to 0.42 in the end" in findings[0].message
    assert str(findings[0]).startswith(f"site/index.html:{line + 1}: [audit] untagged number")


@pytest.mark.parametrize(
    "html",
    [
        "<li>Layer 3 of the stack</li>",
        r'<p><span class="arithmatex">\(x^2\)</span></p>',
        '<table><tr><td>-2.25</td></tr></table>',
        "<p><em>1e-06</em></p>",
        '<p><span class="tv-like">7</span></p>',
    ],
)
def test_untagged_numbers_anywhere_in_prose_are_reported(trace: Trace, html: str) -> None:
    assert len(audit(trace, html)) == 1


def test_changed_diagram_label_is_reported(trace: Trace) -> None:
    good = format_value(trace.resolve("STACK[4].plain"), "fixed6")
    findings = audit(trace, clean_body(trace).replace(good, good.replace("0.007812", "0.007813")))
    assert len(findings) == 1, findings
    assert "'0.007813'" in findings[0].message and "diagram label" in findings[0].message


def test_untraced_number_in_diagram_title_is_reported(trace: Trace) -> None:
    findings = audit(trace, svg("x").replace("Four layers", "Seven 7 layers"))
    assert len(findings) == 1 and "'7'" in findings[0].message


def test_diagram_tokens_cover_every_record_in_both_formats(trace: Trace) -> None:
    tokens = diagram_tokens(trace)
    for value in ("0.0078125", "0.007812", "−0.003906", "1.5", "−2.125", "0.000002",
                  "0.31640625", "0.316406", "0.75", "24", "25"):
        assert value in tokens, value
    assert "0.42" not in tokens


def test_finding_is_one_line() -> None:
    assert str(Finding("trace/index.html", 7, "audit", "a\nb")) == (
        "site/trace/index.html:7: [audit] a b"
    )
    assert str(Finding("index.html", None, "links", "m")) == "site/index.html: [links] m"


def test_run_gates_on_empty_dir_is_a_finding(tmp_path: Path, trace: Trace) -> None:
    findings = run_gates(tmp_path, trace)
    assert len(findings) == 1 and "no HTML page" in findings[0].message


# --- the real site ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_support.built_site(tmp_path_factory)


@pytest.fixture
def site_copy(built_site: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(built_site, tmp_path / "site"))


def _tamper(site: Path, pattern: str, replace: str, page: str = "index.html") -> None:
    path = site / page
    html = path.read_text(encoding="utf-8")
    new, count = re.subn(pattern, replace, html, count=1, flags=re.S)
    assert count == 1, f"nothing to tamper with: {pattern!r} not in {page}"
    path.write_text(new, encoding="utf-8")


@pytest.mark.slow
def test_real_site_passes_every_static_gate(built_site: Path, trace: Trace) -> None:
    findings = run_gates(built_site, trace)
    assert findings == [], "\n".join(map(str, findings))


@pytest.mark.slow
def test_real_site_has_traced_values_and_diagrams(built_site: Path) -> None:
    html = (built_site / "index.html").read_text(encoding="utf-8")
    assert html.count('class="tv"') >= 20
    assert "residual-diagram" in html


@pytest.mark.slow
def test_real_site_changed_traced_value_is_reported(site_copy: Path, trace: Trace) -> None:
    _tamper(site_copy, r'(<span class="tv"[^>]*>)([^<]+)(</span>)', r"\g<1>\g<2>1\g<3>")
    findings = audit_site(site_copy, trace)
    assert len(findings) == 1, findings
    assert "shows" in findings[0].message and "the trace gives" in findings[0].message


@pytest.mark.slow
def test_real_site_untagged_number_is_reported(site_copy: Path, trace: Trace) -> None:
    _tamper(site_copy, r'(<article class="md-content__inner[^>]*>)',
            r"\g<1><p>An untagged 0.42 in a paragraph.</p>")
    findings = audit_site(site_copy, trace)
    assert len(findings) == 1, findings
    assert "'0.42'" in findings[0].message and "An untagged 0.42 in a" in findings[0].message


@pytest.mark.slow
def test_real_site_changed_diagram_label_is_reported(site_copy: Path, trace: Trace) -> None:
    _tamper(site_copy, r'(<svg[^>]*residual-diagram.*?<text[^>]*>)[^<]*\d[^<]*(</text>)',
            r"\g<1>0.4242\g<2>")
    findings = audit_site(site_copy, trace)
    assert len(findings) == 1, findings
    assert "'0.4242'" in findings[0].message and "diagram label" in findings[0].message
