"""The lock (requirements/lock.txt) as the site reads it: which versions the site is built with.

Contract: ``parse_lock(text)`` returns every pin (``name==version``, an optional ``; marker``,
continuation lines of hashes and comments), names in PEP 503 form; anything else is a
``ValueError`` naming the line. ``pinned(root, name)`` is the installed version of a locked
distribution, checked against the lock: a version the lock does not pin raises ``BuildError``
(a page must not claim a version the build did not use). ``render_pin`` is the one HTML form
of such a version on a page, which the provenance audit accepts only when it equals the one
``render_pin`` makes from the lock for that package, as it accepts citations only from the
bibliography.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from markupsafe import Markup

from sitebuild.errors import BuildError

LOCK = "requirements/lock.txt"
_PIN = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==(?P<version>[^\s;\\]+)"
    r"\s*(?:;\s*(?P<marker>[^\\]+?))?\s*\\?\s*"
)


def normalize(name: str) -> str:
    """A distribution name in PEP 503 form: ``PyYAML`` and ``pyyaml`` are the same package."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    name: str  # normalized
    version: str
    marker: str | None  # None: the pin holds everywhere
    line: int


def parse_lock(text: str, origin: str = "lock") -> list[Pin]:
    """Every pin of a lock, in file order. Anything that is neither a pin, a continuation line
    (hashes), a comment nor blank is an error: the lock must pin every package exactly."""
    pins = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or (raw[:1].isspace() and line.startswith("--hash=")):
            continue
        match = _PIN.fullmatch(line)
        if match is None:
            raise ValueError(f"{origin}:{number}: expected 'name==version', got {line!r}")
        pins.append(Pin(normalize(match["name"]), match["version"], match["marker"], number))
    return pins


def pinned(root: Path, name: str) -> str:
    """The installed version of ``name``, which the lock must pin."""
    path = root / LOCK
    try:
        pins = parse_lock(path.read_text(encoding="utf-8"), LOCK)
    except (OSError, ValueError) as err:
        raise BuildError(LOCK, f"cannot read the lock: {err}") from None
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        raise BuildError(LOCK, f"{name} is not installed") from None
    if not any(pin.name == normalize(name) and pin.version == version for pin in pins):
        raise BuildError(LOCK, f"{name} {version} is installed but not pinned by the lock; "
                         "reinstall from it (rm -r .venv && ./dev setup)")
    return version


def render_pin(name: str, version: str) -> Markup:
    return Markup('<code class="pinned" data-lock="{}">{}</code>').format(normalize(name),
                                                                       version)

