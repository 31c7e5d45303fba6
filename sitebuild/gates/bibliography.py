"""The citations the audit accepts: exactly those rendered from the project's bibliography.

Contract: `project_references(root)` reads `extra.references` from `root/mkdocs.yml` (YAML
tags such as MkDocs' `!ENV` or `!!python/name:` load as None and are never executed) and
validates it with `sitebuild.citations.load_references`; an unreadable or invalid file raises
`GateError`/`LocatedError` naming it. `rendered_citations(references)` is the set of
`<cite class="citation">…</cite>` elements `render_citation` makes, one per entry: the audit
exempts a citation from the number check only when its HTML is one of them, character for
character.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sitebuild.citations import Reference, load_references, render_citation
from sitebuild.errors import GateError

ROOT = Path(__file__).resolve().parents[2]


class _Loader(yaml.SafeLoader):
    """SafeLoader that reads unknown tags (MkDocs' `!ENV`, `!!python/...`) as None."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def project_references(root: Path = ROOT) -> dict[str, Reference]:
    """The validated bibliography of the project at `root`."""
    path = root / "mkdocs.yml"
    try:
        config: Any = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except OSError as err:
        raise GateError(str(path), None, f"cannot read the bibliography: "
                        f"{err.strerror or err}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise GateError(str(path), line, f"not valid YAML: {' '.join(str(err).split())}") \
            from None
    extra = config.get("extra") if isinstance(config, Mapping) else None
    return load_references(extra if isinstance(extra, Mapping) else {})


def rendered_citations(references: Mapping[str, Reference]) -> frozenset[str]:
    """The exact HTML of every citation the bibliography can render."""
    return frozenset(str(render_citation(references, key)) for key in references)
