"""The claims' rules (tracefile/claims.py, tracefile/schemas/stream_claims.py): each verdict
each rule can give, reached from made-up grids, and every claim declared with words a page
can show."""

from __future__ import annotations

import re

import pytest

from tracefile.claims import VERDICTS, ArmEvidence, Evidence
from tracefile.schemas.stream_claims import (
    CLAIMS,
    deep_plain_fails,
    depth_helps,
    postnorm_needs_warmup,
    postnorm_tuned_better,
)

UNIGRAM, FORMAT_ONLY = 2.5, 2.0


def arm(variant: str, norm: str, depth: int, lr: float, finals: tuple[float, ...],
        warmup: int = 0) -> ArmEvidence:
    return ArmEvidence(f"{variant}-{norm}-{depth}-{lr}-{warmup}", variant, norm, depth, lr,
                       warmup, finals)


def evidence(*arms: ArmEvidence) -> Evidence:
    return Evidence(arms, UNIGRAM, FORMAT_ONLY)


def spread(centre: float) -> tuple[float, ...]:
    return (centre - 0.02, centre - 0.01, centre, centre + 0.01, centre + 0.02)


def plain_and_residual(plain: float, residual: float, other_plain: float = 2.5
                       ) -> list[ArmEvidence]:
    return [arm("residual", "pre", 4, 0.01, spread(residual)),
            arm("residual", "pre", 4, 0.001, spread(residual + 0.3)),
            arm("plain", "pre", 4, 0.01, spread(other_plain)),
            arm("plain", "pre", 4, 0.001, spread(plain))]


@pytest.mark.parametrize("plain, residual, other, verdict", [
    (2.5, 1.2, 2.5, "supports"),  # no plain run gets below the format-only loss
    (1.6, 1.2, 2.5, "qualifies"),  # plain trains at its best rate, only worse
    (1.2, 1.2, 2.5, "contradicts"),  # the plain median is no worse
    (1.21, 1.2, 2.5, "inconclusive"),  # the seeds overlap
])
def test_deep_plain_fails(plain, residual, other, verdict) -> None:
    assert deep_plain_fails(evidence(*plain_and_residual(plain, residual, other))) == verdict


def depths(*centres: float) -> Evidence:
    return evidence(*(arm("residual", "pre", depth, 0.01, spread(centre))
                      for depth, centre in zip((2, 4, 8), centres, strict=False)))


@pytest.mark.parametrize("centres, verdict", [
    ((1.5, 1.3, 1.1), "supports"), ((1.5, 1.3, 1.31), "qualifies"),
    ((1.3, 1.5, 1.7), "contradicts"), ((1.3, 1.31, 1.3), "inconclusive"),
])
def test_depth_helps(centres, verdict) -> None:
    assert depth_helps(depths(*centres)) == verdict


def postnorm(bare: float, warm: float, slow: float, pre: float = 1.3) -> Evidence:
    return evidence(arm("residual", "pre", 8, 0.01, spread(pre)),
                    arm("residual", "post", 8, 0.01, spread(bare)),
                    arm("residual", "post", 8, 0.01, spread(warm), warmup=100),
                    arm("residual", "post", 8, 0.001, spread(slow)))


@pytest.mark.parametrize("bare, warm, slow, verdict", [
    (2.5, 1.3, 2.5, "supports"),  # only warm-up rescues it
    (2.5, 1.3, 1.4, "qualifies"),  # a lower rate rescues it as well
    (2.5, 2.5, 2.5, "qualifies"),  # warm-up does not rescue it
    (1.4, 1.3, 1.4, "contradicts"),  # it trains without warm-up
    (2.0, 1.3, 2.5, "inconclusive"),  # some seeds train, some do not
])
def test_postnorm_needs_warmup(bare, warm, slow, verdict) -> None:
    assert postnorm_needs_warmup(postnorm(bare, warm, slow)) == verdict


@pytest.mark.parametrize("warm, verdict", [(1.2, "supports"), (1.4, "contradicts"),
                                           (1.31, "inconclusive")])
def test_postnorm_tuned_better(warm, verdict) -> None:
    assert postnorm_tuned_better(postnorm(2.5, warm, 2.5)) == verdict


def test_every_claim_is_declared_once_with_words_a_page_can_show() -> None:
    keys = [claim.key for claim in CLAIMS]
    assert len(set(keys)) == len(keys)
    for claim in CLAIMS:
        assert re.fullmatch(r"[a-z][a-z-]*", claim.key) and re.fullmatch(r"[a-z-]+",
                                                                          claim.section)
        assert not re.search(r"[0-9]", claim.words + claim.rule), claim.key
        assert claim.decide(evidence()) == "inconclusive"  # nothing to compare


def test_a_rule_gives_only_the_four_verdicts() -> None:
    grids = [depths(1.5, 1.3, 1.1), postnorm(2.5, 1.3, 2.5),
             evidence(*plain_and_residual(2.5, 1.2))]
    assert {claim.decide(grid) for claim in CLAIMS for grid in grids} <= set(VERDICTS)
