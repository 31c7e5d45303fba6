"""Tests for sitebuild/cache.py: the cache, the keys of the engine runs, the generated files and
the published site.

A cached artefact must come back unchanged when nothing changed (hit), be rebuilt when any
input changed (miss), and never be served when its entry was damaged (rebuilt).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest
from paths import GOLDEN_TRACE, ROOT

from diagrams.errors import RenderError
from sitebuild import cache, engine_runs, generated
from sitebuild.cache import MANIFEST, Cache, content_key, source_files
from sitebuild.paths import CHAPTER_TRACE
from sitebuild.publish import write_folder
from tracefile import TraceSet, parse_trace


class Builder:
    """A build function that counts its calls and returns fixed files."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.calls = files, 0

    def __call__(self) -> dict[str, bytes]:
        self.calls += 1
        return dict(self.files)


def fetch_or_build(cache: Cache, kind: str, key: str,
                   build: Callable[[], dict[str, bytes]]) -> tuple[dict[str, bytes], str]:
    """What the pipeline does with an entry: look it up, and build and store it on a miss."""
    cached, status = cache.lookup(kind, key)
    if cached is not None:
        return cached, status
    files = build()
    cache.store(kind, key, files)
    return files, status


FILES = {"forward.svg": b"<svg>forward</svg>", "sub/stack.html": b"<table></table>"}


def test_miss_then_hit_returns_the_same_bytes(tmp_path: Path) -> None:
    cache, build = Cache(tmp_path), Builder(FILES)
    first, status1 = fetch_or_build(cache, "generated", "k1", build)
    second, status2 = fetch_or_build(cache, "generated", "k1", build)
    assert (status1, status2) == ("miss", "hit")
    assert first == second == FILES
    assert build.calls == 1


def test_a_changed_input_is_a_new_key_and_a_miss(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "templates").mkdir(parents=True)
    (src / "templates" / "t.html.j2").write_text("{{ a }}")
    before = content_key([("trace", "T"), *source_files(tmp_path, [src])])
    (src / "templates" / "t.html.j2").write_text("{{ b }}")
    after = content_key([("trace", "T"), *source_files(tmp_path, [src])])
    assert before != after
    cache, build = Cache(tmp_path / "cache"), Builder(FILES)
    fetch_or_build(cache, "generated", before, build)
    _, status = fetch_or_build(cache, "generated", after, build)
    assert status == "miss" and build.calls == 2


def test_keys_are_unambiguous_and_ignore_bytecode(tmp_path: Path) -> None:
    assert content_key([("a", "bc")]) != content_key([("ab", "c")])
    assert content_key([("a", "b"), ("c", "")]) != content_key([("a", "b")])
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    key = content_key(source_files(tmp_path, [tmp_path / "pkg"]))
    (tmp_path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    assert content_key(source_files(tmp_path, [tmp_path / "pkg"])) == key
    (tmp_path / "pkg" / "m.py").write_text("x = 2\n")
    assert content_key(source_files(tmp_path, [tmp_path / "pkg"])) != key


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda e: (e / "forward.svg").write_bytes(b"<svg>tampered</svg>"),
         "hash mismatch in forward.svg"),
        (lambda e: (e / "sub" / "stack.html").unlink(), "missing file sub/stack.html"),
        (lambda e: (e / "stray.svg").write_bytes(b""), "unlisted file stray.svg"),
        (lambda e: (e / MANIFEST).write_text("{not json"), "unreadable manifest"),
        (lambda e: (e / MANIFEST).write_text("[]"), "manifest is not a mapping"),
    ],
)
def test_a_corrupted_entry_is_detected_and_rebuilt(tmp_path: Path, damage, problem) -> None:
    cache, build = Cache(tmp_path), Builder(FILES)
    fetch_or_build(cache, "generated", "k", build)
    damage(cache.entry_dir("generated", "k"))
    files, status = fetch_or_build(cache, "generated", "k", build)
    assert status.startswith("rebuilt (") and problem in status
    assert files == FILES and build.calls == 2
    # The rebuilt entry is whole again: the next fetch is a plain hit.
    assert fetch_or_build(cache, "generated", "k", build)[1] == "hit"


def test_a_failing_build_leaves_no_entry_behind(tmp_path: Path) -> None:
    cache = Cache(tmp_path)

    def broken() -> dict[str, bytes]:
        raise RuntimeError("dot crashed")

    with pytest.raises(RuntimeError):
        fetch_or_build(cache, "generated", "k", broken)
    assert list(tmp_path.iterdir()) == []


def test_old_entries_are_pruned(tmp_path: Path) -> None:
    cache = Cache(tmp_path, keep=2)
    for key in ("a", "b", "c"):
        fetch_or_build(cache, "generated", key, Builder(FILES))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated-b", "generated-c"]


def test_pruning_keeps_kinds_apart(tmp_path: Path) -> None:
    cache = Cache(tmp_path, keep=1)
    fetch_or_build(cache, "engine-a-b", "k1", Builder(FILES))
    for key in ("k2", "k3"):
        fetch_or_build(cache, "engine-a", key, Builder(FILES))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["engine-a-b-k1", "engine-a-k3"]


def test_write_folder_replaces_the_folder_exactly(tmp_path: Path) -> None:
    target = tmp_path / "generated"
    write_folder(target, {"old.svg": b"old"})
    write_folder(target, {"new.svg": b"new"})
    assert sorted(p.name for p in target.iterdir()) == ["new.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated"]


def test_manifest_lists_every_file_hash(tmp_path: Path) -> None:
    entry = Cache(tmp_path).store("engine", "k", FILES)
    manifest = json.loads((entry / MANIFEST).read_text())
    assert sorted(manifest) == sorted(FILES)
    assert all(len(digest) == 64 for digest in manifest.values())


# ---- the real keys and the real generate step ----


def fake_root(tmp_path: Path) -> Path:
    """A project root holding copies of the sources the keys hash."""
    root = tmp_path / "root"
    for name in ("tracefile", "diagrams", "sitebuild", "engine"):
        shutil.copytree(ROOT / name, root / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def golden_trace(max_error: str = "3e-10"):
    """The golden trace with its worst gradient-check error set to ``max_error``."""
    text = re.sub(r"max-error=\S+", f"max-error={max_error}", GOLDEN_TRACE.read_text())
    return TraceSet({CHAPTER_TRACE: parse_trace(text, str(GOLDEN_TRACE))}, CHAPTER_TRACE)


def engine_key(root: Path) -> str:
    return content_key([(job.name, engine_runs.job_key(root, job))
                        for job in engine_runs.engine_jobs()])


def test_engine_key_follows_engine_sources(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    before = engine_key(root)
    assert engine_key(root) == before
    (root / "sitebuild" / "cache.py").write_text("# the site side is not an engine input\n")
    assert engine_key(root) == before
    with (root / "engine" / "__init__.py").open("a") as f:
        f.write("\n# changed\n")
    assert engine_key(root) != before


def test_generated_key_follows_trace_and_templates(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    before = generated.generated_key(root, golden_trace())
    assert generated.generated_key(root, golden_trace()) == before
    assert generated.generated_key(root, golden_trace("4e-10")) != before
    template = next((root / "diagrams" / "templates").glob("*.html.j2"))
    template.write_text(template.read_text() + "\n<!-- edited -->\n")
    assert generated.generated_key(root, golden_trace()) != before


def rendering_modules() -> list[str]:
    """Every module the generate phase may run: the drawing code and the trace contract."""
    return sorted(p.relative_to(ROOT).as_posix() for name in generated.DRAWING_CODE
                  for p in (ROOT / name).rglob("*.py") if "__pycache__" not in p.parts)


def test_the_rendering_modules_are_what_we_expect() -> None:
    # Guards rendering_modules() itself: it must find the helpers, not just the entry points.
    assert {"diagrams/dot_parts.py", "tracefile/schema.py", "tracefile/values.py"} <= set(
        rendering_modules())


@pytest.mark.parametrize("module", rendering_modules())
def test_generated_key_follows_every_rendering_module(tmp_path: Path, module: str) -> None:
    root = fake_root(tmp_path)
    before = generated.generated_key(root, golden_trace())
    with (root / module).open("a") as f:
        f.write("\n# changed\n")
    assert generated.generated_key(root, golden_trace()) != before


@pytest.mark.parametrize("edited", ["sitebuild/gates/audit.py", "sitebuild/render.py",
                                    "sitebuild/serve.py", "sitebuild/cache.py",
                                    "engine/__init__.py"])
def test_generated_key_ignores_what_rendering_does_not_use(tmp_path: Path, edited: str) -> None:
    # The engine reaches the diagrams only through the trace text, which is in the key.
    root = fake_root(tmp_path)
    before = generated.generated_key(root, golden_trace())
    with (root / edited).open("a") as f:
        f.write("\n# changed\n")
    assert generated.generated_key(root, golden_trace()) == before


@pytest.mark.parametrize("dist", ["numpy", "jinja2", "markupsafe", "matplotlib"])
def test_generated_key_follows_library_versions(tmp_path: Path, dist: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_root(tmp_path)
    before = generated.generated_key(root, golden_trace())
    real = generated.dist_version
    monkeypatch.setattr(generated, "dist_version",
                        lambda name: "0.0-other" if name == dist else real(name))
    assert generated.generated_key(root, golden_trace()) != before


def test_generated_key_follows_the_graphviz_version(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_root(tmp_path)
    before = generated.generated_key(root, golden_trace())
    monkeypatch.setattr(generated, "dot_version", lambda: "dot - graphviz version 0.0")
    assert generated.generated_key(root, golden_trace()) != before


def generate(traces: TraceSet, target: Path, cache: Cache) -> str:
    """The generate phase's cache status, keyed as a build keys it."""
    return generated.generate(traces, target, cache, generated.generated_key(ROOT, traces))[0]


def test_generate_hits_misses_and_repairs(tmp_path: Path) -> None:
    cache, target = Cache(tmp_path / "cache"), tmp_path / "generated"
    assert generate(golden_trace(), target, cache) == "miss"
    fresh = {p.name: p.read_bytes() for p in target.iterdir()}
    assert {"forward.svg", "backward.svg", "checks.svg", "stack.svg"} <= set(fresh)
    assert generate(golden_trace(), target, cache) == "hit"
    entry = next((tmp_path / "cache").glob("generated-*"))
    (entry / "forward.svg").write_text("<svg>stale</svg>")
    assert generate(golden_trace(), target, cache).startswith("rebuilt (hash")
    assert {p.name: p.read_bytes() for p in target.iterdir()} == fresh
    assert generate(golden_trace("4e-10"), target, cache) == "miss"


def test_a_drawing_that_fails_stores_nothing(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(traces: TraceSet) -> dict[str, bytes]:
        raise RenderError("<plot chart>", None, "cannot be drawn")

    cache, target = Cache(tmp_path / "cache"), tmp_path / "generated"
    monkeypatch.setattr(generated, "draw", broken)
    with pytest.raises(RenderError, match="cannot be drawn"):
        generated.generate(golden_trace(), target, cache, "k")
    assert not target.exists() and cache.lookup("generated", "k") == (None, "miss")


def test_the_installed_versions_name_every_distribution() -> None:
    listed = cache.installed_versions().splitlines()
    assert listed == sorted(listed)
    assert f"mkdocs=={metadata.version('mkdocs')}" in listed


def fake_site_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for folder in ("docs", "notebooks", "engine", "sitebuild"):
        (root / folder).mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# A page\n")
    (root / "notebooks" / "lab.py").write_text("# %%\nx = 1\n")
    (root / "engine" / "listed.py").write_text("def shown_on_a_page(): ...\n")
    (root / "sitebuild" / "build.py").write_text("# the build\n")
    (root / "mkdocs.yml").write_text("site_name: x\n")
    return root


def test_the_site_key_follows_traces_pages_settings_and_options(
        tmp_path: Path, golden_traces: TraceSet) -> None:
    root = fake_site_root(tmp_path)

    def key(options: str = "mkdocs", report: bytes | None = b"r") -> str:
        return cache.site_key(root, golden_traces, report, "generated", options)

    before = key()
    assert key() == before
    assert key("zensical") != before and key(report=None) != before
    (root / "docs" / "index.md").write_text("# An edited page\n")
    assert key() != before
    edited = key()
    for edit in ("mkdocs.yml", "engine/listed.py", "sitebuild/build.py", "notebooks/lab.py"):
        (root / edit).write_text((root / edit).read_text() + "# edited\n")
        assert key() != edited, edit  # a listing's source: the page shows it
        edited = key()
    assert cache.site_key(root, golden_traces, b"r", "generated", "mkdocs") == edited
    assert cache.site_key(root, golden_traces, b"r", "other generated", "mkdocs") != edited


def test_a_site_is_up_to_date_only_while_it_is_what_was_published(tmp_path: Path) -> None:
    build_dir, out = tmp_path / "build", tmp_path / "site"
    build_dir.mkdir()
    out.mkdir()
    (out / "index.html").write_text("<p>published</p>")
    assert not cache.is_up_to_date(build_dir, out, "k")
    cache.record(build_dir, out, "k")
    assert cache.is_up_to_date(build_dir, out, "k")
    assert not cache.is_up_to_date(build_dir, out, "other")
    (out / "index.html").write_text("<p>tampered</p>")
    assert not cache.is_up_to_date(build_dir, out, "k")
