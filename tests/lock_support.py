"""Reading the lock (requirements/lock.txt) and comparing it with what is installed.

The lock is written by ``./dev lock`` (``uv pip compile --universal --generate-hashes``). Each
package starts a line ``name==version``, followed by ``; marker`` when that pin holds only for
some Pythons or systems, and by continuation lines of hashes and ``# via`` comments. The parser
is the build's own (``sitebuild.citations``); these functions are pure apart from
``installed_versions``, so a test can feed them a made-up lock or
a made-up set of installed packages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.version import InvalidVersion, Version

from sitebuild.citations import Pin, normalize

LOCK = Path(__file__).resolve().parent.parent / "requirements" / "lock.txt"


def locked_versions(pins: Iterable[Pin], environment: Mapping[str, str] | None = None) -> dict:
    """The locked version of each package for one environment (default: this interpreter),
    leaving out pins whose marker does not hold there."""
    versions: dict[str, str] = {}
    for pin in pins:
        if pin.marker is not None and not Marker(pin.marker).evaluate(environment):
            continue
        if pin.name in versions:
            raise ValueError(f"line {pin.line}: {pin.name} is pinned twice for this environment")
        versions[pin.name] = pin.version
    return versions


def installed_versions(names: Iterable[str]) -> dict[str, str | None]:
    """The installed version of each named distribution, None where it is not installed."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def mismatches(locked: Mapping[str, str], installed: Mapping[str, str | None]) -> list[str]:
    """One line per locked package whose installed version differs, sorted by name.
    ``installed`` may use any spelling of a name; it is normalized here."""
    have = {normalize(name): version for name, version in installed.items()}
    problems = []
    for name, version in sorted(locked.items()):
        actual = have.get(name)
        if actual is None:
            problems.append(f"{name}: locked {version}, not installed")
        elif not _same_version(actual, version):
            problems.append(f"{name}: locked {version}, installed {actual}")
    return problems


def unlocked(locked: Mapping[str, str], installed: Iterable[str],
             project: str = "residual-chapter") -> list[str]:
    """One line per installed distribution the lock does not hold (the project aside): a
    package installed by hand could otherwise satisfy an import the lock does not."""
    known = {normalize(name) for name in locked} | {normalize(project)}
    return sorted(f"{normalize(name)}: installed, not in the lock"
                  for name in {normalize(n) for n in installed} - known)


def all_installed() -> list[str]:
    """The name of every distribution installed in this environment."""
    return [dist.metadata["Name"] for dist in metadata.distributions()]


def _same_version(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def report(problems: list[str], lock: str = "requirements/lock.txt") -> str:
    """The failure message: every mismatch, and how to put the environment back."""
    lines = [f"{len(problems)} installed package(s) differ from {lock}:"]
    lines += [f"  {problem}" for problem in problems]
    lines.append("Reinstall from the lock: rm -r .venv && ./dev setup")
    return "\n".join(lines)
