"""HTML a page's script shows in place of the page's own, published as a script file.

Contract: ``shown_html_script(name, fragments)`` is the text of one such file: a statement that
files ``fragments`` (an object of objects of HTML strings: group → key → HTML) under ``name``
in ``window.residualShownHtml``, which ``docs/assets/js/shown-html.js`` loads on demand (a
script, not a fetched JSON file, so a site read from the file system works too).
``read_shown_html_script(text)`` gives back ``(name, fragments)`` or raises ValueError naming
what is wrong; the audit reads every fragment with it. An element whose script shows such HTML
names the file (``data-shown-html-src``, relative to its page) and the name
(``data-shown-html``).
"""

from __future__ import annotations

import json
import re

REGISTRY = "window.residualShownHtml"
_STATEMENT = re.compile(rf"\({re.escape(REGISTRY)} = {re.escape(REGISTRY)} \|\| \{{\}}\)"
                        r'\[("[a-z0-9:-]+")\] = (.*);\n', re.S)


def shown_html_script(name: str, fragments: dict[str, dict[str, str]]) -> str:
    """The script that files ``fragments`` under ``name`` (lower-case letters, digits, ``:``
    and ``-``)."""
    data = json.dumps(fragments, ensure_ascii=False, separators=(",", ":"))
    return f"({REGISTRY} = {REGISTRY} || {{}})[{json.dumps(name)}] = {data};\n"


def read_shown_html_script(text: str) -> tuple[str, dict[str, dict[str, str]]]:
    """The name and the fragments a ``shown_html_script`` files; ValueError otherwise."""
    found = _STATEMENT.fullmatch(text)
    if found is None:
        raise ValueError(f"expected one statement ({REGISTRY} = {REGISTRY} || {{}})[NAME] = "
                         "{...};")
    data = json.loads(found.group(2))
    if not isinstance(data, dict) or not all(
            isinstance(of, dict) and all(isinstance(html, str) for html in of.values())
            for of in data.values()):
        raise ValueError("expected an object of objects of HTML strings")
    return json.loads(found.group(1)), data
