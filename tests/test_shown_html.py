"""diagrams/shown_html.py: HTML a page's script shows, as a script file, and read back."""

from __future__ import annotations

import pytest

from diagrams.shown_html import read_shown_html_script, shown_html_script

FRAGMENTS = {"cells": {"0-1": '<p>a "quoted" </p>\u2028'}, "counts": {"1": "<p></p>"}}


def test_a_script_reads_back_as_written() -> None:
    script = shown_html_script("explorer:x", FRAGMENTS)
    assert script.startswith('(window.residualShownHtml = window.residualShownHtml || {})'
                             '["explorer:x"] = {"cells":') and script.endswith("};\n")
    assert read_shown_html_script(script) == ("explorer:x", FRAGMENTS)


@pytest.mark.parametrize(("change", "says"), [
    (lambda s: s.replace(";\n", "\n"), "expected one statement"),
    (lambda s: "alert(1);\n" + s, "expected one statement"),
    (lambda s: s.replace('{"cells"', '{"cells" oops', 1), "Expecting"),
    (lambda s: s.replace('"<p></p>"', "1"), "object of objects of HTML"),
])
def test_anything_else_is_refused(change, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        read_shown_html_script(change(shown_html_script("explorer:x", FRAGMENTS)))
