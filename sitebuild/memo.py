"""One content-keyed memo step, for the passes a long-lived process (``serve``) repeats.

Contract: ``remembered(memo, slot, inputs, make)`` is ``make()``, unless ``memo`` holds for
``slot`` what ``make`` returned last time from equal ``inputs``; what ``make`` returns is then
kept under ``slot`` with its ``inputs``. Without a memo (``None``: a one-off build) it is
``make()``. One entry per slot (a page and a step, or a figure): only its latest making is
worth keeping. The hook's page rendering and figure insertion and the audit's and the links
gate's per-page parses use it; ``sitebuild.warm`` holds the memos and says why each is safe.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, MutableMapping
from typing import Any, TypeVar

Made = TypeVar("Made")


def remembered(memo: MutableMapping[Hashable, tuple[Any, Any]] | None, slot: Hashable,
               inputs: object, make: Callable[[], Made]) -> Made:
    """What ``make()`` returns, or returned last time for ``slot`` from equal ``inputs``."""
    if memo is None:
        return make()
    kept = memo.get(slot)
    if kept is not None and kept[0] == inputs:
        made: Made = kept[1]
        return made
    made = make()
    memo[slot] = (inputs, made)
    return made
