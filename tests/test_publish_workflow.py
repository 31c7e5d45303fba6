"""The GitHub Pages workflow (.github/workflows/pages.yml): valid against GitHub's workflow
schema (check-jsonschema's vendored copy, offline), running the README's test command before
it builds, and building for the Pages address rather than a loopback one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from paths import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
CHECKER = Path(sys.executable).with_name("check-jsonschema")


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHECKER), "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def test_the_workflow_matches_the_github_workflow_schema() -> None:
    done = validate(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_broken_workflow_fails_the_schema(tmp_path: Path) -> None:
    broken = tmp_path / "pages.yml"
    text = WORKFLOW.read_text(encoding="utf-8").replace("runs-on: ubuntu-24.04", "", 1)
    broken.write_text(text.replace("steps:", "stepz:", 1), encoding="utf-8")
    assert validate(broken).returncode != 0


def test_it_tests_then_builds_with_the_pdf_for_the_pages_address() -> None:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    runs = [step.get("run", "") for step in jobs["build"]["steps"]]
    test = runs.index("./dev test")  # the README's test command
    build = next(i for i, run in enumerate(runs) if run.startswith("./dev pdf"))  # build --pdf
    assert test < build and "--site-url" in runs[build] and "127.0.0.1" not in runs[build]
    upload = next(s for s in jobs["build"]["steps"]
                  if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site"
    assert jobs["deploy"]["needs"] == "build"


def test_the_readme_names_the_same_test_command() -> None:
    assert "./dev test" in (ROOT / "README.md").read_text(encoding="utf-8")
