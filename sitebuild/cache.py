"""The one way the build keys content: the cache of engine runs and figures, and "up to date".

Contract: ``content_key(parts)`` is the sha256 of labelled parts, ``source_files(root, paths)``
the parts of every file under ``paths``; every key is made of these. An entry of ``Cache(root)``
is a folder ``<kind>-<key>/`` with its files and a manifest of their hashes, swapped into
place; a corrupt entry is deleted and reported by ``lookup``; the newest ``keep`` of a kind
stay. ``site_key`` covers everything a published site depends on; ``is_up_to_date`` holds
while the site in ``out`` is still exactly what was published from that key (``record``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path

from sitebuild.publish import write_folder
from tracefile import TraceSet
from tracefile.files import write_atomic

MANIFEST = "MANIFEST.json"
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = {".pyc", ".pyo"}


def content_key(parts: Iterable[tuple[str, bytes | str]]) -> str:
    """Hash labelled parts unambiguously (label, length and bytes of each)."""
    digest = hashlib.sha256()
    for label, data in parts:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        digest.update(label.encode("utf-8") + b"\0")
        digest.update(len(raw).to_bytes(8, "big"))
        digest.update(raw)
    return digest.hexdigest()


def source_files(root: Path, paths: Iterable[Path]) -> list[tuple[str, bytes]]:
    """Every file at or under ``paths`` as (its path relative to ``root``, its bytes), sorted
    by path; bytecode caches are skipped: they change when Python runs, not a source."""
    found = set()
    for path in paths:
        found.update(sorted(path.rglob("*")) if path.is_dir() else [path] if path.is_file() else [])
    parts = []
    for path in sorted(found):
        rel = path.relative_to(root)
        if _SKIP_DIRS.intersection(rel.parts) or path.suffix in _SKIP_SUFFIXES:
            continue
        if path.is_file():
            parts.append((rel.as_posix(), path.read_bytes()))
    return parts


class Cache:
    """A folder of content-addressed entries (see the module docstring)."""

    def __init__(self, root: Path, keep: int = 6) -> None:
        self.root = Path(root)
        self.keep = keep

    def entry_dir(self, kind: str, key: str) -> Path:
        """Where the entry for ``kind``/``key`` lives (whether or not it exists)."""
        return self.root / f"{kind}-{key}"

    def lookup(self, kind: str, key: str) -> tuple[dict[str, bytes] | None, str]:
        """The cached files for ``key`` and ``"hit"``, or None and why there are none
        (``"miss"``, or ``"rebuilt (...)"`` when a corrupt entry was found and deleted)."""
        entry = self.entry_dir(kind, key)
        if not entry.exists():
            return None, "miss"
        files, problem = self.load(entry)
        if problem is None:
            os.utime(entry)  # newest-used entries survive pruning
            return files, "hit"
        shutil.rmtree(entry, ignore_errors=True)
        return None, f"rebuilt ({problem})"

    @staticmethod
    def load(entry: Path) -> tuple[dict[str, bytes], str | None]:
        """Read and verify an entry; return its files and ``None``, or a problem."""
        try:
            manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            return {}, f"unreadable manifest: {err.__class__.__name__}"
        if not isinstance(manifest, dict):
            return {}, "manifest is not a mapping"
        present = {p.relative_to(entry).as_posix() for p in entry.rglob("*") if p.is_file()}
        extra = sorted(present - set(manifest) - {MANIFEST})
        if extra:
            return {}, f"unlisted file {extra[0]}"
        files = {}
        for name, want in sorted(manifest.items()):
            try:
                data = (entry / name).read_bytes()
            except OSError:
                return {}, f"missing file {name}"
            if hashlib.sha256(data).hexdigest() != want:
                return {}, f"hash mismatch in {name}"
            files[name] = data
        return files, None

    def store(self, kind: str, key: str, files: Mapping[str, bytes]) -> Path:
        """Write ``files`` as a new entry, atomically, then prune old entries."""
        manifest = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
        listed = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
        entry = self.entry_dir(kind, key)
        write_folder(entry, {**files, MANIFEST: listed.encode("utf-8")}, "cache entry")
        self.prune(kind)
        return entry

    def prune(self, kind: str) -> None:
        """Drop all but the ``keep`` most recently used entries of ``kind``."""
        # Exactly this kind: "engine-a" must not prune the entries of "engine-a-b".
        entries = [p for p in self.root.glob(f"{kind}-*")
                   if p.is_dir() and "-" not in p.name[len(kind) + 1 :]]
        entries.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in entries[self.keep :]:
            shutil.rmtree(old, ignore_errors=True)

#: What the site is built from besides the traces (the drawing code is in the generated key):
#: ``engine`` and ``tracefile`` for the listings the pages include from their source, and the
#: labs' ``notebooks`` with their executed records.
SITE_SOURCES = ("docs", "notebooks", "records/notebooks", "engine", "tracefile", "sitebuild",
                "mkdocs.yml", "build_site.py", "requirements/lock.txt",
                "node_modules/.package-lock.json")


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
    name = hashlib.sha256(os.path.abspath(out).encode("utf-8")).hexdigest()[:16]
    return build_dir / f"published-{name}.json"


def is_up_to_date(build_dir: Path, out: Path, key: str) -> bool:
    try:
        stamp = json.loads(_stamp(build_dir, out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(stamp, dict) and stamp.get("key") == key
            and stamp.get("site") == tree_digest(out))


def record(build_dir: Path, out: Path, key: str) -> None:
    stamp = {"key": key, "out": os.path.abspath(out), "site": tree_digest(out)}
    write_atomic(_stamp(build_dir, out), json.dumps(stamp, indent=1, sort_keys=True) + "\n")
