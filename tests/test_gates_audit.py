"""Tests for the provenance audit (sitebuild/gates/audit.py) and the `run_gates` entry point.

Small synthetic pages pin each rule, every exemption next to a look-alike that must not be
exempt; the slow tests tamper a copy of a really built site and prove the audit reports each
kind of tampering (and nothing on the untampered site). Diagrams: test_gates_figures.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest
from site_support import published_traces

from diagrams.format import format_value, traced
from sitebuild.citations import (
    load_references,
    project_references,
    render_citation,
    render_reference,
    rendered_citations,
)
from sitebuild.errors import BuildError
from sitebuild.gates import Finding, run_gates
from sitebuild.gates.audit import audit_page, audit_site
from tracefile import Trace
from tracefile.schemas import CHAPTER_TRACE

REFERENCES = load_references({"references": {"he2016": {
    "authors": "Kaiming He et al.", "title": "Deep Residual Learning", "venue": "CVPR",
    "year": "2016", "arxiv": "1512.03385"}}})
CITATION = str(render_reference(REFERENCES, "he2016"))  # as the References list it
IN_TEXT = str(render_citation(REFERENCES, "he2016"))  # as the text cites it


def page(body: str, chrome: str = "Chapter") -> str:
    """A page shaped like Material's, with ``chrome`` in its title, header, nav and footer."""
    return (
        f"<!doctype html>\n<html><head><title>Residual {chrome}</title>\n"
        '<meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.6.14">\n'
        '<script>var version = "9.8";</script></head><body>\n'
        f'<header class="md-header" title="Material {chrome}">Material</header>\n'
        f'<nav class="md-nav">{chrome}</nav>\n'
        '<article class="md-content__inner md-typeset">\n'
        f"{body}\n"
        "</article>\n<footer>Made with Material</footer></body></html>\n"
    )


@pytest.mark.parametrize("where", ["text", "title"])
def test_a_number_around_the_article_is_reported_against_mkdocs_yml(trace: Trace,
                                                                    where: str) -> None:
    html = page("<p>Clean.</p>", "in 42 steps")
    findings = audit_page("index.html", html, trace)
    assert findings and all(f.source == "mkdocs.yml" and "'42'" in f.message
                            for f in findings), findings
    assert any(f"the {where}" in f.message for f in findings), findings
    # Scripts and other meta tags are not read; the description is.
    described = page("<p>Clean.</p>").replace(
        "<script>", '<meta name="description" content="A 99% chapter"><script>')
    assert [f.message.split(":")[0] for f in audit_page("index.html", described, trace)] == [
        "untagged number '99' in the content attribute of <meta> around the article "
        "(mkdocs.yml's site_name, site_description or nav)"]


def audit(trace: Trace, body: str) -> list[Finding]:
    return audit_page("index.html", page(body), trace,
                      citations=rendered_citations(REFERENCES))


def clean_body(trace: Trace) -> str:
    return "\n".join([
        '<h1 id="intro">Residual connections<a class="headerlink" href="#intro" '
        'title="Permanent link">¶</a></h1>',
        f"<p>The output is {traced(trace, 'FORWARD.output')} and the plain stack keeps "
        f"{traced(trace, 'STACK[4].plain[0]', 'fixed6')} after the last layer.</p>",
        f"<p>Scaled: {traced(trace, 'SCALED[0.5].output')}; float64, UTF-8, v1, x_1.</p>",
        '<div class="highlight"><span class="filename">engine/nn/residual.py</span><pre>'
        "<span></span><code>y = x + 0.42 * f(3)\n.5</code></pre></div>",
        "<p>See <code>engine/trace.py</code>, <code>float64</code>, <code>-o FILE</code>, "
        "<code>residual-connections-v2</code>; press <kbd>F5</kbd>.</p>",
        f"<p>{CITATION}</p>",
        '<p><img src="a.png" alt="the residual block"></p>',
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


@pytest.mark.parametrize(("path", "fmt", "old", "new", "says"), [
    # a stored value changed, a rounded value offered as the stored one, a repeat
    ("STACK[4].plain[0]", "fixed6", 'data-exact="0.0078125"', 'data-exact="0.0078"',
     "gives its stored value as data-exact '0.0078', the trace stores '0.0078125'"),
    ("STACK[4].plain[0]", "fixed6", ' data-exact="0.0078125"', "",
     "shows '0.007812' with no data-exact, the trace stores '0.0078125'"),
    ("STACK[4].plain[0]", "exact", ">0.0078125<", ' data-exact="0.0078125">0.0078125<',
     "repeats what it shows in data-exact"),
])
def test_a_wrong_stored_value_is_reported(trace: Trace, path: str, fmt: str, old: str,
                                          new: str, says: str) -> None:
    right = str(traced(trace, path, fmt))
    wrong = right.replace(old, new, 1)
    assert wrong != right
    assert audit(trace, f"{clean_body(trace)}\n<p>{right}</p>") == []
    findings = audit(trace, f"{clean_body(trace)}\n<p>{wrong}</p>")
    assert len(findings) == 1 and says in findings[0].message, findings


def test_words_unlike_the_schemas_are_reported(trace: Trace) -> None:
    right = str(traced(trace, "FORWARD.output"))
    wrong = right.replace("The block&#39;s output", "The branch&#39;s output", 1)
    assert wrong != right
    findings = audit(trace, clean_body(trace).replace(right, wrong))
    assert len(findings) == 1 and "says in words" in findings[0].message, findings


def test_nested_traced_span_title_is_audited(trace: Trace) -> None:
    # A title is read as prose: no traced span carries one.
    right = str(traced(trace, "FORWARD.output"))
    nested = right.replace("</span>", '<span class="tv" title="0.42"></span></span>', 1)
    findings = audit(trace, clean_body(trace).replace(right, nested))
    assert len(findings) == 1 and "'0.42'" in findings[0].message, findings


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
        "<p>A leading-dot number: .5</p>",
        "<p>Negative too: −.5</p>",
        "<p>Full-width digits: ５</p>",
    ],
)
def test_untagged_numbers_anywhere_in_prose_are_reported(trace: Trace, html: str) -> None:
    assert len(audit(trace, html)) == 1


@pytest.mark.parametrize(
    "html",
    [
        # Class names an author can add with attr_list ({ .headerlink }) exempt nothing.
        '<p class="headerlink">0.42</p>',
        '<p class="highlight">0.42</p>',
        '<div class="highlight"><p>0.42</p></div>',
        '<p class="footnote-ref">0.42</p>',
        '<a class="headerlink" href="#intro">0.42</a>',
        # Only the highlighter's div.highlight > pre > code is a listing.
        "<pre>0.42</pre>",
        "<pre><code>0.42</code></pre>",
        '<div class="highlight"><pre>0.42<code>x</code></pre></div>',
        # Inline code, keys and sample output are prose.
        "<p>Call <code>stack(0.42)</code>.</p>",
        "<p>Press <kbd>0.42</kbd>.</p>",
        "<p>It prints <samp>0.42</samp>.</p>",
    ],
)
def test_look_alikes_of_exempt_structures_are_audited(trace: Trace, html: str) -> None:
    findings = audit(trace, html)
    assert len(findings) == 1, findings
    assert "untagged number '" in findings[0].message


@pytest.mark.parametrize(
    ("html", "attribute"),
    [
        ('<p><img src="a.png" alt="loss 0.42"></p>', "alt attribute of <img>"),
        ('<p><img src="a.png" alt="x" /><abbr title="about .5">s</abbr></p>', "title"),
        ('<p><span aria-label="0.42 units">x</span></p>', "aria-label"),
        ('<p><span aria-description="see 0.42">x</span></p>', "aria-description"),
        ('<p><a class="headerlink" href="#i" title="link 3">¶</a></p>', "title"),
        ('<ol start="3"><li>x</li></ol>', "start attribute of <ol>"),
    ],
)
def test_numbers_in_attributes_a_reader_sees_are_reported(trace: Trace, html: str,
                                                           attribute: str) -> None:
    findings = audit(trace, html)
    assert len(findings) == 1, findings
    assert attribute in findings[0].message and "untagged number" in findings[0].message


def test_traced_span_title_is_checked_but_its_other_attributes_are_scanned(trace: Trace) -> None:
    span = str(traced(trace, "FORWARD.output"))
    assert audit(trace, f"<p>{span}</p>") == []
    labelled = span.replace("<span ", '<span aria-label="about 0.42" ')
    findings = audit(trace, f"<p>{labelled}</p>")
    assert len(findings) == 1 and "aria-label attribute of <span>" in findings[0].message


def test_markdown_footnote_numbers_are_audited(trace: Trace) -> None:
    # The site enables no footnotes; a page that used them must fail, not pass unchecked.
    html = markdown.markdown("Text[^a].\n\n[^a]: First.", extensions=["footnotes"])
    assert 'class="footnote-ref"' in html
    assert [f.message.split(":")[0] for f in audit(trace, html)] == [
        "untagged number '1' in article text",  # the reference's number
        "untagged number '1' in the title attribute of <a>"]  # "Jump back to footnote 1"


def test_citation_rendered_from_the_bibliography_is_exempt(trace: Trace) -> None:
    assert "2016" in CITATION and "1512.03385" in CITATION
    assert "2016" in IN_TEXT and 'data-preview="' in IN_TEXT
    assert audit(trace, f"<p>As shown by {CITATION} and {IN_TEXT}</p>") == []


@pytest.mark.parametrize(
    ("cited", "old", "new", "named"),
    [(CITATION, "2016", "2015", "'2015'"), (CITATION, "CVPR", "CVPR 24", "'24'"),
     (CITATION, "Kaiming", "Kaiming 2", "'2'"), (IN_TEXT, "2016)<", "2015)<", "'2015'"),
     (IN_TEXT, "(2016)", "(2015)", "the data-preview attribute"),
     (IN_TEXT, "CVPR.", "CVPR 24.", "the data-preview attribute")],
    ids=["year", "venue", "author", "label", "preview-year", "preview-venue"],
)
def test_citation_not_from_the_bibliography_is_audited(trace: Trace, cited: str, old: str,
                                                       new: str, named: str) -> None:
    assert old in cited
    tampered = cited.replace(old, new, 1)
    findings = audit(trace, f"<p>{tampered}</p>")
    assert findings, tampered
    assert all("citation, version, verdict term or rule not rendered by the site" in f.message
               for f in findings)
    assert any(named in f.message for f in findings), findings


def test_a_typed_or_out_of_step_figure_number_is_audited(trace: Trace) -> None:
    label = '<span class="element-number" data-for="figure-a">Figure {}</span>'
    ref = '<a class="element-ref" href="#figure-a">Figure {}</a>'
    assert audit(trace, f"<figure>{label.format(1)}</figure><p>See {ref.format(1)}.</p>") == []
    assert ["'2'" in f.message for f in audit(
        trace, f"<figure>{label.format(2)}</figure>")] == [True]  # the page's first is 1
    assert ["'3'" in f.message for f in audit(
        trace, f"<figure>{label.format(1)}</figure><p>See {ref.format(3)}.</p>")] == [True]
    assert ["'3'" in f.message for f in audit(trace, "<p>As Figure 3 shows.</p>")] == [True]


def test_hand_written_citation_is_audited(trace: Trace) -> None:
    findings = audit(trace, '<p><cite class="citation">He et al., 2016</cite></p>')
    assert len(findings) == 1 and "'2016'" in findings[0].message


def test_finding_is_one_line_and_the_caller_names_the_site(tmp_path: Path) -> None:
    finding = Finding("trace/index.html", 7, "audit", "a\nb", detail="x\ny")
    assert str(finding) == "site/trace/index.html:7: [audit] a b"
    assert str(Finding("index.html", None, "links", "m")) == "site/index.html: [links] m"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# x\n", encoding="utf-8")
    moved = Finding("index.html", 3, "audit", "m").shown_as("out/dir", tmp_path / "docs")
    assert str(moved) == "docs/index.md: [audit] m (built into out/dir/index.html:3)"
    located = Finding("index.html", 3, "audit", "m", needles=("x",))
    assert str(located.shown_as("out", tmp_path / "docs")) == (
        "docs/index.md:1: [audit] m (built into out/index.html:3)")
    theme = Finding("404.html", 2, "audit", "m").shown_as("out", tmp_path / "docs")
    assert str(theme) == "out/404.html:2: [audit] m"
    assert Finding("404.html", 1, "audit", "m").shown_as("x", tmp_path / "docs").source is None


def test_run_gates_on_empty_dir_is_a_finding(tmp_path: Path, trace: Trace) -> None:
    findings = run_gates(tmp_path, trace)
    assert len(findings) == 1 and "no HTML page" in findings[0].message


def test_run_gates_on_a_missing_dir_is_a_located_error(tmp_path: Path, trace: Trace) -> None:
    with pytest.raises(BuildError, match="no such folder"):
        run_gates(tmp_path / "nowhere", trace)


# --- the real site ---------------------------------------------------------------------


def _tamper(site: Path, pattern: str, replace: str, page: str = "index.html") -> None:
    path = site / page
    html = path.read_text(encoding="utf-8")
    new, count = re.subn(pattern, replace, html, count=1, flags=re.S)
    assert count == 1, f"nothing to tamper with: {pattern!r} not in {page}"
    path.write_text(new, encoding="utf-8")


ARTICLE = r'(<article class="md-content__inner[^>]*>)'


@pytest.mark.slow
def test_real_site_passes_every_static_gate(built_site: Path, drawn: dict[str, str]) -> None:
    findings = run_gates(built_site, published_traces(built_site, CHAPTER_TRACE), rendered=drawn)
    assert findings == [], "\n".join(map(str, findings))


@pytest.mark.slow
def test_real_site_has_traced_values_diagrams_and_citations(built_site: Path) -> None:
    html = (built_site / "index.html").read_text(encoding="utf-8")
    assert html.count('class="tv"') >= 20
    assert "residual-diagram" in html and 'data-diagram="stack"' in html
    assert html.count('<cite class="citation">') >= 1
    assert any(c in html for c in rendered_citations(project_references()))


@pytest.mark.slow
def test_real_site_changed_traced_value_is_reported(site_copy: Path, drawn: dict[str, str]
                                                    ) -> None:
    _tamper(site_copy, r'(<span class="tv"[^>]*>)([^<]+)(</span>)', r"\g<1>\g<2>1\g<3>")
    findings = audit_site(site_copy, published_traces(site_copy, CHAPTER_TRACE), rendered=drawn)
    assert len(findings) == 1, findings
    assert "shows" in findings[0].message and "the trace gives" in findings[0].message


@pytest.mark.slow
@pytest.mark.parametrize(("file", "what"), [
    ("assets/charts/gradient-flow-v4-values.js", "values["),
    ("assets/charts/residual-stream-v4.js", "wide["),
])
def test_real_site_changed_value_in_a_script_file_is_reported(site_copy: Path, file: str,
                                                              what: str,
                                                              drawn: dict[str, str]) -> None:
    # A plotted value in a fold's data, a tick label in a wide drawing: each read where it is.
    data = (site_copy / file).read_text(encoding="utf-8")
    pattern = r'(class=\\"tv\\"[^>]*>)([^<]+)(<)' if "values" in file else r"(<text[^>]*>)(\d)"
    forged, count = re.subn(pattern, r"\g<1>9\g<2>\g<3>" if "values" in file else r"\g<1>9\g<2>",
                            data, count=1)
    assert count == 1
    (site_copy / file).write_text(forged, encoding="utf-8")
    traces = published_traces(site_copy, CHAPTER_TRACE)
    findings = [f for f in audit_site(site_copy, traces, rendered=drawn) if f.gate == "audit"]
    assert findings and all(f"(in the HTML a script shows, {file} {what}" in f.message
                            for f in findings), findings


@pytest.mark.slow
@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>An untagged 0.42 in a paragraph.</p>", "An untagged 0.42 in a"),
        ('<p class="headerlink">Exempt by class? 0.42</p>', "Exempt by class? 0.42"),
        ("<p>Inline <code>stack(7)</code> code.</p>", "'7'"),
        ('<p><img src="assets/images/favicon.png" alt="loss .5"></p>', "alt attribute"),
    ],
    ids=["paragraph", "class-name", "inline-code", "alt"],
)
def test_real_site_untagged_number_is_reported(site_copy: Path, drawn: dict[str, str],
                                               html: str, expected: str) -> None:
    _tamper(site_copy, ARTICLE, rf"\g<1>{html}")
    findings = audit_site(site_copy, published_traces(site_copy, CHAPTER_TRACE), rendered=drawn)
    assert len(findings) == 1, findings
    assert "untagged number" in findings[0].message and expected in findings[0].message


@pytest.mark.slow
def test_real_site_changed_citation_year_is_reported(site_copy: Path,
                                                     drawn: dict[str, str]) -> None:
    _tamper(site_copy, r'(<cite class="citation">[^<]*<a[^>]*>[^<]*</a>[^<]*?) 2016', r"\1 2015")
    findings = audit_site(site_copy, published_traces(site_copy, CHAPTER_TRACE), rendered=drawn)
    # The whole citation is audited like prose now: its year and its arXiv number.
    assert sorted(re.search(r"'[^']+'", f.message).group(0) for f in findings) == [
        "'1512.03385'", "'2015'"], findings
    assert all("citation, version, verdict term or rule not rendered by the site" in f.message
               for f in findings)


def _typeset(tex: str, drawn: str) -> str:
    """A formula as sitebuild.typeset_math leaves it: KaTeX's MathML (keeping the TeX) and
    its drawn HTML."""
    return (f'<p><span class="arithmatex"><span class="katex"><span class="katex-mathml"><math>'
            f'<semantics><mrow>{drawn}</mrow><annotation encoding="application/x-tex">{tex}'
            f'</annotation></semantics></math></span><span class="katex-html" '
            f'aria-hidden="true">{drawn}</span></span></span></p>')


def test_a_typeset_formula_is_read_once_as_its_tex(trace: Trace) -> None:
    # A digit in a formula is one finding (not three: MathML, HTML and TeX); a subscript
    # index, W_1, is none, as in the TeX it was written in.
    findings = audit(trace, _typeset("x^2", "<mi>x</mi><mn>2</mn>"))
    assert len(findings) == 1 and "'2'" in findings[0].message, findings
    assert audit(trace, _typeset("W_1", "<mi>W</mi><mn>1</mn>")) == []
