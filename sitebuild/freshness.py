""""Up to date": one key over everything a published site depends on.

Contract: ``site_key(root, traces, report, generated_key, site_url, unverified)`` hashes the
trace texts, which of them are unverified, the report, the generated figures' key (drawing
code, Graphviz, library versions), every page and asset under ``docs/``, ``mkdocs.yml``, the
lock, the build package and ``build_site.py``, the npm assets as installed, every installed
Python distribution's version, the site URL and the build date. ``is_up_to_date(build_dir,
out, key)`` is true when the last site published into ``out`` was built from that key and
``out`` still holds exactly what was published then; ``record(build_dir, out, key)`` notes a
publication. The stamp lives in the build folder, so
the site itself carries no build metadata.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path

from sitebuild.cache import input_key, tree_parts
from tracefile import TraceSet
from tracefile.files import write_atomic

#: What the site is built from besides the traces (the drawing code is in the generated key).
SITE_SOURCES = ("docs", "sitebuild", "mkdocs.yml", "build_site.py", "requirements/lock.txt",
                "node_modules/.package-lock.json")


def installed_versions() -> str:
    """Every installed distribution as ``name==version`` lines, sorted. Reading every
    package's metadata takes about 20 ms, which each of serve's rebuilds would pay again:
    the answer is kept while the metadata folders on ``sys.path`` are the same ones, each
    unchanged since it was read (an install or an upgrade replaces a package's folder)."""
    return _versions(_metadata_folders())


@functools.lru_cache(maxsize=1)
def _versions(folders: tuple[tuple[str, str, int], ...]) -> str:
    """The versions, read while ``folders`` are the metadata folders on ``sys.path``."""
    return "\n".join(sorted({f"{d.metadata['Name']}=={d.version}"
                             for d in metadata.distributions()}))


def _metadata_folders() -> tuple[tuple[str, str, int], ...]:
    """Each ``*.dist-info`` and ``*.egg-info`` entry on ``sys.path``, with its change time."""
    found = []
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as listing:
                found += [(entry, item.name, item.stat().st_mtime_ns) for item in listing
                          if item.name.endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue
    return tuple(found)


def site_key(root: Path, traces: TraceSet, report: bytes | None, generated_key: str,
             site_url: str | None, unverified: tuple[str, ...] = ()) -> str:
    parts: list[tuple[str, bytes | str]] = [
        (f"trace:{trace.trace_id}", trace.text) for trace in traces]
    parts += [("report", report if report is not None else b"\0none"),
              ("generated", generated_key), ("site-url", site_url or ""),
              ("unverified", ",".join(unverified)),
              ("date", os.environ.get("SOURCE_DATE_EPOCH", "")),
              ("distributions", installed_versions())]
    for name in SITE_SOURCES:
        path = root / name
        if path.is_dir():
            parts += tree_parts(path, root)
        elif path.is_file():
            parts.append((name, path.read_bytes()))
    return input_key(parts)


def tree_digest(folder: Path) -> str:
    """One hash over every file under ``folder`` (paths and bytes)."""
    return input_key(tree_parts(folder, folder)) if folder.is_dir() else "missing"


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
