"""Where the project and the test suite's reference files are; the one definition.

Imported by ``conftest.py`` and by the test modules (``from paths import ROOT``); the
directory holding this file is on the import path when pytest runs the suite.
"""

from __future__ import annotations

from pathlib import Path

from sitebuild.paths import CHAPTER_TRACE, REPORT_NAME
from tracefile import SCHEMAS

#: The project root (the checkout the tests run from).
ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Versioned reference drawings: what the drawing code must write, byte for byte.
GOLDEN_DIR = ROOT / "tests" / "golden"
#: The recorded results (engine/records.py): every trace and the learner report, as the
#: engine writes them; the suite's reference traces.
RECORDS_DIR = ROOT / "records"
GOLDEN_TRACE = RECORDS_DIR / SCHEMAS[CHAPTER_TRACE].file_name
GOLDEN_REPORT = RECORDS_DIR / REPORT_NAME
#: The address the session's sites are built for (`--site-url`): instant navigation follows only
#: sitemap links with this path and port, so the browser tests open the site exactly here.
SITE_URL = "http://127.0.0.1:8000/"
#: A second address, under a sub-path (as a project's GitHub Pages site is served).
SUB_PATH_URL = "http://127.0.0.1:8000/residual/"
#: The repository's own output folders: no test may write into them.
OUTPUT_DIRS = (ROOT / "build", ROOT / "site")
