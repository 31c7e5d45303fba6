"""Tests for sitebuild/generator.py: the site generator's settings and failures, and a whole
site built with the second generator, Zensical, passing the gates."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from paths import ROOT, SITE_URL, SUB_PATH_URL
from site_support import build_or_fail, published_traces

from sitebuild.errors import BuildError
from sitebuild.gates import run_gates
from sitebuild.gates.links import check_links
from sitebuild.generator import (
    check_nav,
    check_settings,
    generate_site,
    mkdocs_settings,
    read_settings,
    strip_generator_tag,
    zensical_config,
)
from sitebuild.paths import CHAPTER_TRACE


def settings(tmp_path: Path, edit: dict[str, object]) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "mkdocs.yml").write_bytes((ROOT / "mkdocs.yml").read_bytes())
    if edit:
        config = {**read_settings(root), **edit}
        (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root


def test_zensicals_settings_read_the_rendered_pages_and_listings_from_the_project(
        tmp_path: Path) -> None:
    root = settings(tmp_path, {})
    config = zensical_config(root, tmp_path / "build" / "pages", SITE_URL)
    assert (config["docs_dir"], config["site_dir"], config["site_url"]) == (
        "pages", "zensical-site", SITE_URL)
    snippets = next(e["pymdownx.snippets"] for e in config["markdown_extensions"]
                    if isinstance(e, dict) and "pymdownx.snippets" in e)
    assert snippets["base_path"] == [str(root)]  # !relative $config_dir, read as the project


@pytest.mark.parametrize(("edit", "said"), [
    ({"hooks": ["x.py"]}, "mkdocs.yml: hooks: Zensical accepts hooks but never runs them"),
    ({"plugins": ["search", {"tags": {}}]}, "mkdocs.yml: plugins: Zensical has no 'tags'"),
])
def test_what_zensical_would_ignore_fails_the_build(tmp_path: Path, edit: dict[str, object],
                                                     said: str) -> None:
    with pytest.raises(BuildError) as raised:
        zensical_config(settings(tmp_path, edit), tmp_path / "pages", None)
    assert str(raised.value).startswith(said)


def test_the_generator_tag_is_removed() -> None:
    page = ('<head>\n  <meta charset="utf-8">\n  <meta name="generator" content="mkdocs-1.6.1, '
            'mkdocs-material-9.8.2">\n  <title>x</title>\n</head>')
    assert strip_generator_tag(page) == (
        '<head>\n  <meta charset="utf-8">\n  <title>x</title>\n</head>')


@pytest.mark.slow
def test_a_zensical_build_passes_the_gates(tmp_path: Path) -> None:
    built = build_or_fail(tmp_path / "site", tmp_path / "build",
                          extra=("--generator", "zensical", "--site-url", SITE_URL))
    site = built.site
    assert any(line.startswith("[build] zensical ") for line in built.stdout.splitlines())
    assert (site / "search.json").is_file() and not (site / "search").exists()  # Zensical's
    assert 'name="generator"' not in (site / "index.html").read_text(encoding="utf-8")
    # The build ran them already; again here, so that this test fails if a build ever stops.
    assert run_gates(site, published_traces(site, CHAPTER_TRACE), base="/") == []
    assert not (tmp_path / "build" / "zensical-site").exists()
    shutil.rmtree(site.resolve())  # the site is a link to its release folder
    site.unlink()


@pytest.mark.parametrize(("edit", "said"), [
    ({"use_directory_urls": "maybe"},
     r"^mkdocs\.yml:\d+: use_directory_urls: Expected type: <class 'bool'> but received"),
    ({"theme": {"name": "no-such-theme"}}, r"^mkdocs\.yml:\d+: theme: Unrecognised theme name"),
    ({"site_nme": "typo"}, r"^mkdocs\.yml:\d+: site_nme: Unrecognised configuration name"),
])
def test_mkdocs_own_validation_stops_the_build_at_the_key_it_names(
        tmp_path: Path, edit: dict[str, object], said: str) -> None:
    root = settings(tmp_path, edit)
    (tmp_path / "build" / "pages").mkdir(parents=True)
    copy = mkdocs_settings(root, tmp_path / "build" / "pages", None)
    with pytest.raises(BuildError, match=said) as raised:
        check_settings(root, copy)
    key = next(iter(edit))
    line = int(str(raised.value).split(":")[1])
    assert (root / "mkdocs.yml").read_text().splitlines()[line - 1].startswith(f"{key}:")
    if key == "site_nme":  # a warning: the preview, which builds leniently, goes on
        check_settings(root, copy, strict=False)


def test_the_projects_settings_pass_mkdocs_validation(tmp_path: Path) -> None:
    root = settings(tmp_path, {})
    (tmp_path / "build" / "pages").mkdir(parents=True)
    check_settings(root, mkdocs_settings(root, tmp_path / "build" / "pages", SITE_URL))


def test_a_zensical_failure_is_its_first_complaint_on_one_line(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "build" / "pages").mkdir(parents=True)
    (root / "mkdocs.yml").write_text("site_name: x\ndocs_dir: build/pages\n", encoding="utf-8")
    (root / "build" / "pages" / "index.md").write_text("# A page\n\n[gone](missing.md)\n")
    site = tmp_path / "site"
    site.mkdir()
    with pytest.raises(BuildError) as raised:
        generate_site(root, root / "build" / "pages", site, None, "zensical")
    # No Markdown source of the page: named at the rendered page's line Zensical showed.
    assert str(raised.value) == "build/pages/index.md:3: zensical: Warning: page does not exist"
    assert list(site.iterdir()) == []  # nothing half-built where the site goes


# -- the 404 page under a sub-path --------------------------------------------------------------

@pytest.mark.slow
def test_the_404_page_finds_its_assets_under_the_sub_path_it_was_built_for(
        sub_path_build: tuple[Path, subprocess.CompletedProcess[str]], built_site: Path) -> None:
    site, done = sub_path_build
    path = urlsplit(SUB_PATH_URL).path
    assert done.stdout.splitlines()[-1].endswith(f"published {site}"), done.stdout
    assert check_links(site, path) == []  # the 404 page too, its links from the sub-path
    # The session's site, built for the root of its host, would be unstyled there.
    missed = [f.message for f in check_links(built_site, path) if f.page == "404.html"]
    assert any(".css' leaves the site" in message for message in missed), missed


def test_the_nav_names_only_rendered_pages(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    (pages / "labs").mkdir(parents=True)
    for page in ("index.md", "labs/one.md"):
        (pages / page).write_text("# A page\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("nav:\n  - Home: index.md\n  - Labs:\n"
                                         "    - One: labs/one.md\n    - Two: labs/two.md\n"
                                         "  - Elsewhere: https://example.org/\n",
                                         encoding="utf-8")
    nav = read_settings(tmp_path)["nav"]
    with pytest.raises(BuildError, match=r"^mkdocs\.yml:5: nav: 'labs/two\.md' is not a page"):
        check_nav(tmp_path, pages, nav)
    (pages / "labs" / "two.md").write_text("# Two\n", encoding="utf-8")
    check_nav(tmp_path, pages, nav)  # every page there, and a link elsewhere is no page
