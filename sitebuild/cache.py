"""The one way the build keys content, and the content-addressed cache under ``build/cache/``.

Contract: ``content_key(parts)`` is the sha256 of labelled parts (label, length, bytes), and
``source_files(root, paths)`` the parts of every file under ``paths`` (bytecode skipped):
every key (engine runs, generated files, the published site) is made of these. An entry of
``Cache(root)`` is the folder ``<kind>-<key>/`` with its files and ``MANIFEST.json`` (name →
sha256), written beside and renamed into place; ``lookup(kind, key)`` returns the files and
``"hit"``, or None and ``"miss"`` / ``"rebuilt (why)"`` when a corrupt entry (unreadable
manifest, a file missing, changed or unlisted) was deleted. The newest ``keep`` entries of
each kind are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from sitebuild.publish import write_folder

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


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


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
            if sha256_bytes(data) != want:
                return {}, f"hash mismatch in {name}"
            files[name] = data
        return files, None

    def store(self, kind: str, key: str, files: Mapping[str, bytes]) -> Path:
        """Write ``files`` as a new entry, atomically, then prune old entries."""
        manifest = {name: sha256_bytes(data) for name, data in sorted(files.items())}
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
