"""Content-addressed cache for generated artefacts under ``build/cache/``.

Role: keep the output of an expensive, deterministic step (the engine's trace and
report, the rendered SVG diagrams and HTML tables) and hand it back when nothing it
depends on has changed.

Contract:
- A key is the sha256 of labelled input parts (``input_key``); callers put into it
  *everything* the output depends on (trace text, sources, tool versions).
- ``Cache(root).lookup(kind, key)`` returns ``(files, status)``: ``files`` maps a relative
  file name to its bytes (``None`` unless ``status`` is ``"hit"``), ``status`` is ``"hit"``,
  ``"miss"`` or ``"rebuilt (...)"`` when a corrupted entry was found and deleted;
  ``store(kind, key, files)`` writes an entry (the pipeline stores what it built on a miss).
- An entry is the folder ``<root>/<kind>-<key>/`` holding the files plus
  ``MANIFEST.json`` (file name → sha256). An entry is corrupt when the manifest is
  unreadable, a listed file is missing or differs from its hash, or an unlisted file
  is present; a corrupt entry is deleted and rebuilt, never served.
- Entries are written into a temporary sibling and renamed into place, so an
  interrupted build never leaves a half-written entry that looks valid.
- Only the newest ``keep`` entries of each kind are kept (each engine job is a kind of its
  own, so a slow experiment's entry is never pushed out by another's).
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


def input_key(parts: Iterable[tuple[str, bytes | str]]) -> str:
    """Hash labelled parts unambiguously (label, length and bytes of each)."""
    digest = hashlib.sha256()
    for label, data in parts:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        digest.update(label.encode("utf-8") + b"\0")
        digest.update(len(raw).to_bytes(8, "big"))
        digest.update(raw)
    return digest.hexdigest()


def tree_parts(root: Path, base: Path) -> list[tuple[str, bytes]]:
    """Every source file under ``root`` as (path relative to ``base``, bytes), sorted.

    Bytecode caches are skipped: they change when Python runs, not when a source does.
    """
    parts = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(base)
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
