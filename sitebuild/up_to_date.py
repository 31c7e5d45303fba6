""""Up to date": one key over everything a published site depends on.

Contract: ``site_key(root, traces, report, generated_key, options)`` hashes the traces, the
report, the generated files' key, every source of the pages, their listings and the build
(``SITE_SOURCES``), every installed distribution's version, the build date and the build's
options (site URL, generator, unverified traces). ``is_up_to_date(build_dir, out, key)`` is
true when the last site published into ``out`` was built from that key and ``out`` still
holds exactly what was published then; ``record(build_dir, out, key)`` notes a publication
(in the build folder: the site carries no build metadata).
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

from sitebuild.cache import content_key, source_files
from tracefile import TraceSet
from tracefile.files import write_atomic

#: What the site is built from besides the traces (the drawing code is in the generated key):
#: ``engine`` for the listings the pages include from its source.
SITE_SOURCES = ("docs", "engine", "sitebuild", "mkdocs.yml", "build_site.py",
                "requirements/lock.txt", "node_modules/.package-lock.json")


def installed_versions() -> str:
    """Every installed distribution as ``name==version`` lines, sorted."""
    return "\n".join(sorted({f"{d.metadata['Name']}=={d.version}"
                             for d in metadata.distributions()}))


def site_key(root: Path, traces: TraceSet, report: bytes | None, generated_key: str,
             options: str) -> str:
    parts: list[tuple[str, bytes | str]] = [
        (f"trace:{trace.trace_id}", trace.text) for trace in traces]
    parts += [("report", report if report is not None else b"\0none"),
              ("generated", generated_key), ("options", options),
              ("date", os.environ.get("SOURCE_DATE_EPOCH", "")),
              ("distributions", installed_versions())]
    return content_key(parts + source_files(root, [root / name for name in SITE_SOURCES]))


def tree_digest(folder: Path) -> str:
    """One hash over every file under ``folder`` (paths and bytes)."""
    return content_key(source_files(folder, [folder])) if folder.is_dir() else "missing"


def _stamp(build_dir: Path, out: Path) -> Path:
    name = hashlib.sha256(str(out.resolve()).encode("utf-8")).hexdigest()[:16]
    return build_dir / f"published-{name}.json"


def is_up_to_date(build_dir: Path, out: Path, key: str) -> bool:
    try:
        stamp = json.loads(_stamp(build_dir, out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(stamp, dict) and stamp.get("key") == key
            and stamp.get("site") == tree_digest(out))


def record(build_dir: Path, out: Path, key: str) -> None:
    stamp = {"key": key, "out": str(out.resolve()), "site": tree_digest(out)}
    write_atomic(_stamp(build_dir, out), json.dumps(stamp, indent=1, sort_keys=True) + "\n")
