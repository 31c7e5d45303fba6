"""Where things live, shared by every phase: the project, where the site publishes each trace,
and the names of a build's temporary folders (``temp_prefix``, recognised by ``TEMPORARY``).
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

from tracefile import SCHEMAS
from tracefile.schemas import CHAPTER_TRACE as CHAPTER_TRACE  # re-exported: pages' default

REPORT_NAME = "learner-report.txt"

#: Temporary folders a build makes (engine runs, cache entries being written, generated files
#: and the site being assembled, a replaced folder): each name carries ``-pid<PID>``, so the
#: next build can tell a dead build's leftovers from a live one's work.
TEMPORARY = re.compile(r"(?:\.[\w.-]*?-|engine-)pid(\d+)(?:-.*)?")


def dist_version(name: str) -> str:
    """Installed version of a distribution, without importing it."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def temp_prefix(name: str) -> str:
    """The prefix of a temporary folder's name: recognisable, and naming this process."""
    return f"{name}-pid{os.getpid()}-"


def trace_url(trace_id: str) -> str:
    """Where the site publishes a trace (the Trace page links to it)."""
    return f"trace/{SCHEMAS[trace_id].file_name}"


#: The project: the folder that holds ``sitebuild/``.
ROOT = Path(__file__).resolve().parent.parent


def shown(path: Path) -> str:
    """``path`` relative to the project when inside it (shorter progress lines); a link is
    shown by its own name, not followed."""
    try:
        return Path(os.path.abspath(path)).relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def served_path(site_url: str | None) -> str:
    """The path a site is served under, ending in "/" as MkDocs makes ``site_url`` end: with
    ``https://host/sub`` a link to ``/subway/`` is outside the site, not inside it."""
    return urlsplit(site_url).path.rstrip("/") + "/" if site_url else "/"
