"""The claims' rules (registered with their experiments, engine/experiments/registry.py)
against their declarations (tracefile/schemas/*_claims.py): each verdict
each rule can give, reached from made-up values, and every claim declared with words a page
can show. A rule reads values by their trace paths, so the made-up values are served the same
way (``resolver``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from paths import RECORDS_DIR

from engine.errors import EngineError
from engine.experiments.claims import Decided, MissingArms, decide, decide_claims
from engine.experiments.gradient_flow.clipping import clipping_tames_explosion
from engine.experiments.gradient_flow.training import (
    identity_start_helps,
    plain_degrades,
    residual_trains_deeper,
)
from engine.experiments.registry import lab_rules
from engine.experiments.residual_stream.training_rules import (
    ArmEvidence,
    deep_plain_fails,
    depth_helps,
    postnorm_fragile_deep,
    postnorm_needs_warmup,
    postnorm_tuned_better,
)
from tracefile.claims import VERDICTS
from tracefile.errors import TraceError
from tracefile.parser import load_trace, parse_trace
from tracefile.schemas import SCHEMAS
from tracefile.schemas.gradient_claims import CLAIMS as GRADIENT_CLAIMS
from tracefile.schemas.stream_claims import CLAIMS

#: Each lab's rules, by claim key, as its experiments register them.
RULES = lab_rules(SCHEMAS["residual-stream-v4"])
GRADIENT_RULES = lab_rules(SCHEMAS["gradient-flow-v4"])
FORMAT_ONLY = 2.0
TRAINING = [claim for claim in CLAIMS if claim.section in ("trainability", "norm-placement")]


def arm(variant: str, norm: str, depth: int, lr: float, finals: tuple[float, ...],
        warmup: int = 0) -> ArmEvidence:
    return ArmEvidence(f"{variant}-{norm}-{depth}-{lr}-{warmup}", variant, norm, depth, lr,
                       warmup, finals)


def verdict_of(rule: Any, get: Callable[[str], Any]) -> str:
    return decide(rule, get).verdict


def resolver(values: dict[str, Any]) -> Callable[[str], Any]:
    """``get`` over made-up values; a path it does not hold fails the test loudly."""
    return lambda path: values[path]


def evidence(*arms: ArmEvidence, margin: float = 0.0) -> Callable[[str], Any]:
    """A training grid of ``arms`` as a trace would hold it, with the rules' ``margin``."""
    values: dict[str, Any] = {"TRAINING-CONFIG.arm-names": tuple(a.arm for a in arms),
                              "CORPUS.format-only": FORMAT_ONLY,
                              "TRAINING-CONFIG.margin": margin}
    for a in arms:
        values.update({f"ARM[{a.arm}].{key}": value for key, value in (
            ("variant", a.variant), ("norm", a.norm), ("depth", a.depth), ("lr", a.lr),
            ("warmup", a.warmup), ("final-validation", a.finals))})
    return resolver(values)


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
    grid = evidence(*plain_and_residual(plain, residual, other))
    assert verdict_of(deep_plain_fails, grid) == verdict


def test_a_loss_moved_by_less_than_the_margin_changes_no_verdict() -> None:
    # Plain seeds a hair under the format-only loss: without a margin plain "trains, only
    # worse"; with one, no plain seed learned anything the margin can tell from noise.
    hair = plain_and_residual(FORMAT_ONLY - 0.01, 1.2)
    assert verdict_of(deep_plain_fails, evidence(*hair)) == "qualifies"
    assert verdict_of(deep_plain_fails, evidence(*hair, margin=0.05)) == "supports"
    # Residual seeds that beat plain by less than the margin do not beat it.
    assert verdict_of(deep_plain_fails, evidence(*plain_and_residual(2.5, 2.4),
                                                 margin=0.1)) == "inconclusive"
    # A step up in depth better by less than the margin is not better.
    assert verdict_of(depth_helps, depths(1.5, 1.3, 1.1)) == "supports"
    assert verdict_of(depth_helps, depths(1.5, 1.3, 1.1, margin=0.2)) == "inconclusive"
    decided = decide(depth_helps, depths(1.5, 1.3, 1.1))
    assert "TRAINING-CONFIG.margin" in decided.because


def depths(*centres: float, margin: float = 0.0) -> Callable[[str], Any]:
    return evidence(*(arm("residual", "pre", depth, 0.01, spread(centre))
                      for depth, centre in zip((2, 4, 8), centres, strict=False)),
                    margin=margin)


@pytest.mark.parametrize("centres, verdict", [
    ((1.5, 1.3, 1.1), "supports"), ((1.5, 1.3, 1.31), "qualifies"),
    ((1.3, 1.5, 1.7), "contradicts"), ((1.3, 1.31, 1.3), "inconclusive"),
])
def test_depth_helps(centres, verdict) -> None:
    assert verdict_of(depth_helps, depths(*centres)) == verdict


def postnorm(bare: float, warm: float, slow: float, pre: float = 1.3) -> Callable[[str], Any]:
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
    assert verdict_of(postnorm_needs_warmup, postnorm(bare, warm, slow)) == verdict


@pytest.mark.parametrize("warm, verdict", [(1.2, "supports"), (1.4, "contradicts"),
                                           (1.31, "inconclusive")])
def test_postnorm_tuned_better(warm, verdict) -> None:
    assert verdict_of(postnorm_tuned_better, postnorm(2.5, warm, 2.5)) == verdict


def by_depth(post: tuple[int, ...], pre_trains: bool = True) -> Callable[[str], Any]:
    """Post-norm at depths two, four and eight with ``post[i]`` of five seeds below the
    format-only loss, at the top rate without warm-up, beside pre-norm there (and a warm-up
    arm and a lower rate, which the rule leaves aside)."""
    arms = []
    for depth, trained in zip((2, 4, 8), post, strict=True):
        finals = tuple(1.5 if seed < trained else 2.5 for seed in range(5))
        arms += [arm("residual", "post", depth, 0.01, finals),
                 arm("residual", "post", depth, 0.01, spread(1.3), warmup=100),
                 arm("residual", "post", depth, 0.001, spread(1.3)),
                 arm("residual", "pre", depth, 0.01, spread(1.3 if pre_trains else 2.5))]
    return evidence(*arms)


@pytest.mark.parametrize("grid, verdict", [
    (by_depth((5, 4, 0)), "supports"),  # trains shallow, fails deep
    (by_depth((5, 3, 2)), "qualifies"),  # fewer deep, not all against none
    (by_depth((4, 5, 0)), "qualifies"),  # not every shallow seed trains
    (by_depth((5, 5, 5)), "contradicts"),  # not fragile at any depth
    (by_depth((2, 4, 3)), "contradicts"),  # more seeds train deep than shallow
    (by_depth((5, 4, 0), pre_trains=False), "inconclusive"),  # the control fails too
])
def test_postnorm_fragile_deep(grid, verdict) -> None:
    assert verdict_of(postnorm_fragile_deep, grid) == verdict


def test_postnorm_fragile_deep_needs_two_depths() -> None:
    grid = evidence(arm("residual", "post", 8, 0.01, spread(2.5)),
                    arm("residual", "pre", 8, 0.01, spread(1.3)))
    assert verdict_of(postnorm_fragile_deep, grid) == "inconclusive"


def test_every_claim_is_declared_once_with_words_a_page_can_show() -> None:
    keys = [claim.key for claim in CLAIMS]
    assert len(set(keys)) == len(keys)
    for claim in CLAIMS:
        assert re.fullmatch(r"[a-z][a-z-]*", claim.key) and re.fullmatch(r"[a-z-]+",
                                                                          claim.section)
        assert not re.search(r"[0-9]", claim.words + claim.rule + claim.construction), claim.key
        for change in claim.changes:  # an earlier rule: its words, its verdict, its commit
            assert not re.search(r"[0-9]", change.rule) and change.verdict in VERDICTS
            assert re.fullmatch(r"[0-9a-f]{7,40}", change.until), claim.key
    for claim in TRAINING:
        assert verdict_of(RULES[claim.key], evidence()) == "inconclusive"  # no arm to compare


def test_a_rule_gives_only_the_four_verdicts() -> None:
    grids = [depths(1.5, 1.3, 1.1), postnorm(2.5, 1.3, 2.5),
             evidence(*plain_and_residual(2.5, 1.2))]
    verdicts = {verdict_of(RULES[claim.key], grid) for claim in TRAINING for grid in grids}
    assert verdicts <= set(VERDICTS)


@pytest.mark.parametrize(("rule", "values", "verdict"), [
    (RULES["stream-is-sum"], {"STREAM.exact-in-order": False}, "contradicts"),
    (RULES["blocks-nudge"], {"STREAM.write-over-stream": (0.1, 0.2)}, "supports"),
    (RULES["blocks-nudge"], {"STREAM.write-over-stream": (2.0, 0.2)}, "qualifies"),
    (RULES["blocks-nudge"], {"STREAM.write-over-stream": (2.0, 0.6)}, "contradicts"),
    (RULES["lens-improves"], {"LENS.residual": (3.0, 2.0, 1.0)}, "supports"),
    (RULES["lens-improves"], {"LENS.residual": (3.0, 1.0, 2.0)}, "qualifies"),
    (RULES["lens-improves"], {"LENS.residual": (1.0, 2.0)}, "contradicts"),
    (RULES["angular-pruning"], {"PRUNING.angular-beats-last": 0, "PRUNING.depth": 4},
     "contradicts"),
    (RULES["angular-pruning"], {"PRUNING.angular-beats-last": 3, "PRUNING.depth": 4}, "supports"),
    (RULES["stream-dominates-memory"], {"MEMORY.activation-stream-share": 0.4}, "qualifies"),
    (RULES["add-is-cheap"], {"FLOPS[lab].add-share": 0.2, "FLOPS[realistic].add-share": 0.0},
     "contradicts"),
    (RULES["bad-shortcut-attenuates"], {"SHORTCUT[badly-scaled].ratio": 0.3,
                                     "SHORTCUT[random].ratio": 0.5}, "qualifies"),
])
def test_analysis_rules(rule, values, verdict) -> None:
    assert verdict_of(rule, resolver(values)) == verdict


def exits(*points: tuple[float, float]) -> Callable[[str], Any]:
    """Early exit on an eight-block model of loss one: (mean blocks, loss) per threshold."""
    values: dict[str, Any] = {"EARLY-EXIT-CONFIG.depth": 8, "EARLY-EXIT-CONFIG.full-loss": 1.0,
                              "EARLY-EXIT-CONFIG.thresholds": tuple(
                                  0.1 * (i + 1) for i in range(len(points)))}
    for i, (blocks, loss) in enumerate(points):
        values[f"EARLY-EXIT[{0.1 * (i + 1)!r}].mean-blocks"] = blocks
        values[f"EARLY-EXIT[{0.1 * (i + 1)!r}].loss"] = loss
    return resolver(values)


@pytest.mark.parametrize(("points", "verdict"), [
    (((7.0, 1.005),), "supports"), (((7.9, 1.005), (7.0, 1.5)), "qualifies"),
    (((8.0, 1.0), (7.0, 1.5)), "contradicts"),
])
def test_early_exit_rule(points, verdict) -> None:
    assert verdict_of(RULES["early-exit-saves"], exits(*points)) == verdict


def stacks(**finals: tuple[float, ...]) -> Callable[[str], Any]:
    """The gradients lab's grid from ``variant_init_depth=finals`` (one rate each)."""
    values: dict[str, Any] = {"TRAINING-CONFIG.arm-names": tuple(finals)}
    for name, losses in finals.items():
        variant, start, depth = name.split("_")
        values.update({f"ARM[{name}].variant": variant, f"ARM[{name}].init": start,
                       f"ARM[{name}].depth": int(depth), f"ARM[{name}].final-loss": losses})
    return resolver(values)


@pytest.mark.parametrize(("finals", "verdict"), [
    ({"plain_default_2": spread(0.1), "plain_default_8": spread(0.5)}, "supports"),
    ({"plain_default_2": spread(0.5), "plain_default_8": spread(0.1)}, "contradicts"),
    ({"plain_default_2": spread(0.5), "plain_default_8": spread(0.51)}, "inconclusive"),
])
def test_plain_degrades(finals, verdict) -> None:
    assert verdict_of(plain_degrades, stacks(**finals)) == verdict


@pytest.mark.parametrize(("zero", "scaled", "verdict"), [
    (0.1, 0.5, "supports"), (0.5, 0.1, "contradicts"), (0.1, 0.11, "inconclusive")])
def test_the_zero_start_is_judged_against_the_better_other_start(zero, scaled, verdict) -> None:
    grid = stacks(residual_zero_8=spread(zero), residual_scaled_8=spread(scaled),
                  residual_default_8=spread(9.0))  # the default start diverges: not the control
    decided = decide(identity_start_helps, grid)
    assert decided.verdict == verdict
    assert decided.because == ("ARM[residual_zero_8].final-loss",
                               "ARM[residual_scaled_8].final-loss")


@pytest.mark.parametrize(("residual", "verdict"), [(0.1, "supports"), (0.9, "contradicts"),
                                                   (0.5, "inconclusive")])
def test_residual_at_its_standard_start_meets_plain_at_its_best(residual, verdict) -> None:
    # The plain stack's best start is the control; the residual stack's default start (which
    # diverges without norms) and its zero start do not count.
    grid = stacks(plain_default_8=spread(0.5), plain_scaled_8=spread(0.95),
                  residual_scaled_8=spread(residual), residual_default_8=spread(9.0),
                  residual_zero_8=spread(0.01))
    decided = decide(residual_trains_deeper, grid)
    assert decided.verdict == verdict
    assert decided.because == ("ARM[residual_scaled_8].final-loss",
                               "ARM[plain_default_8].final-loss")


def test_a_gradients_claim_whose_arms_are_missing_is_inconclusive() -> None:
    grid = stacks(plain_default_8=spread(0.5))
    training = [claim for claim in GRADIENT_CLAIMS[1:] if claim.section == "training"]
    verdicts = {verdict_of(GRADIENT_RULES[claim.key], grid) for claim in training}
    assert verdicts == {"inconclusive"}
    # A grid lacking what a rule compares is inconclusive, decided by the list of what exists
    # (not by every arm the rule looked at on the way).
    def no_arm(get: Callable[[str], Any]) -> str:
        if not get("TRAINING-CONFIG.arm-names")[1:] and get("ARM[only].depth"):
            raise MissingArms("one arm is nothing to compare")
        return "supports"
    grid = resolver({"TRAINING-CONFIG.arm-names": ("only",), "ARM[only].depth": 2})
    assert decide(no_arm, grid) == Decided("inconclusive", ("TRAINING-CONFIG.arm-names",))


INF = float("inf")  # a diverged seed's final loss


def clipping(unclipped: tuple[int, float, float] = (5, INF, INF),
             clipped: tuple[int, float, float] = (0, 0.1, 0.5),
             control: tuple[float, float] = (0.05, 0.1),
             depths: tuple[int, ...] = (8, 32),
             deep_unclipped: tuple[int, float, float] | None = None) -> Callable[[str], Any]:
    """The clipping runs' best arms, each as (diverged seeds, least and largest final loss),
    the control's as (least, largest), at every depth; ``deep_unclipped`` replaces the
    unclipped stack's at the deepest depth. The loss of predicting zero is 1."""
    values: dict[str, Any] = {"CLIP-CONFIG.seeds": (1, 2, 3, 4, 5), "CLIP-CONFIG.zero-loss": 1.0}
    stacks = []
    for depth in depths:
        default = unclipped if deep_unclipped is None or depth != depths[-1] else deep_unclipped
        for model, (diverged, low, high) in (("residual-default", default),
                                             ("residual-default-clipped", clipped),
                                             ("residual-zero", (0, *control))):
            stack = f"{model}-{depth}"
            stacks.append(stack)
            values.update({f"CLIP-BEST[{stack}].{key}": value for key, value in (
                ("model", model), ("depth", depth), ("diverged", diverged), ("low", low),
                ("high", high))})
    values["CLIP-CONFIG.stacks"] = tuple(stacks)
    return resolver(values)


@pytest.mark.parametrize(("runs", "verdict"), [
    (clipping(), "supports"),
    # the unclipped stack trains at a low rate, but every clipped seed still ends lower
    (clipping(unclipped=(0, 0.6, 0.9)), "supports"),
    (clipping(clipped=(0, 0.5, 1.5)), "qualifies"),  # clipped, but not learning
    (clipping(unclipped=(0, 0.3, 0.7)), "qualifies"),  # the two overlap
    (clipping(deep_unclipped=(0, 0.01, 0.05)), "qualifies"),  # unclipped wins at one depth
    (clipping(clipped=(1, 0.1, INF)), "contradicts"),
    (clipping(unclipped=(0, 0.01, 0.05)), "contradicts"),  # unclipped wins at every depth
    (clipping(control=(0.5, 1.5)), "inconclusive"),  # the control did not train
])
def test_clipping_tames_explosion(runs, verdict) -> None:
    assert verdict_of(clipping_tames_explosion, runs) == verdict


def test_clipping_runs_without_a_model_are_inconclusive() -> None:
    values = {"CLIP-CONFIG.stacks": ("residual-default-8",),
              "CLIP-BEST[residual-default-8].model": "residual-default",
              "CLIP-BEST[residual-default-8].depth": 8}
    rule = GRADIENT_RULES["clipping-tames-explosion"]
    assert verdict_of(rule, resolver(values)) == "inconclusive"


LABS = [("residual-stream-v4", RULES), ("gradient-flow-v4", GRADIENT_RULES)]


@pytest.mark.parametrize(("trace_id", "lab_rules"), LABS, ids=[lab for lab, _ in LABS])
def test_each_lab_has_one_rule_per_declared_claim_and_they_give_the_recorded_verdicts(
        trace_id: str, lab_rules: dict[str, Any]) -> None:
    trace = load_trace(RECORDS_DIR / SCHEMAS[trace_id].file_name)
    assert list(lab_rules) == [claim.key for claim in SCHEMAS[trace_id].claims]
    assert {key: decide(rule, trace.resolve) for key, rule in lab_rules.items()} == {
        key: Decided(trace.resolve(f"CLAIM[{key}].verdict"), trace.resolve(f"CLAIM[{key}].because"))
        for key in lab_rules}


def test_claims_are_decided_only_by_rules_naming_exactly_the_declared_claims() -> None:
    schema = SCHEMAS["gradient-flow-v4"]
    missing = dict(list(GRADIENT_RULES.items())[1:])
    with pytest.raises(EngineError, match=r"^gradient-flow-v4: no experiment's rule decides "
                                          r"claim plain-degrades$"):
        decide_claims(schema, {}, missing)
    with pytest.raises(EngineError, match=r"^gradient-flow-v4: a rule decides stream-is-sum, "
                                          r"which the trace does not declare$"):
        decide_claims(schema, {}, {**GRADIENT_RULES, "stream-is-sum": RULES["stream-is-sum"]})


def test_the_parser_checks_a_verdicts_words_and_never_decides_it_again() -> None:
    text = (RECORDS_DIR / SCHEMAS["residual-stream-v4"].file_name).read_text(encoding="utf-8")
    flipped = text.replace("CLAIM key=stream-is-sum verdict=supports",
                           "CLAIM key=stream-is-sum verdict=contradicts")
    assert flipped != text
    trace = parse_trace(flipped, "flipped.trace")  # only a fresh run tells (records --verify)
    assert trace.resolve("CLAIM[stream-is-sum].verdict") == "contradicts"
    dropped = text.replace(
        "CLAIM key=stream-is-sum verdict=supports because=STREAM.exact-in-order\n", "")
    with pytest.raises(TraceError, match="stream-is-sum"):
        parse_trace(dropped, "dropped.trace")


def test_a_verdict_records_the_values_that_decided_it() -> None:
    # A rule that reads only what decides it: every value it read but lists of names.
    values = {"STREAM.exact-in-order": True, "STREAM.names": ("a", "b")}
    def reads_a_list_too(get: Callable[[str], Any]) -> str:
        get("STREAM.names")
        return RULES["stream-is-sum"](get)
    assert decide(reads_a_list_too, resolver(values)) == Decided(
        "supports", ("STREAM.exact-in-order",))
    # A grid rule names the two arms it compared, not every arm it read to find them.
    grid = stacks(plain_default_8=spread(0.5), residual_scaled_8=spread(0.1),
                  residual_scaled_2=spread(0.05))
    decided = decide(residual_trains_deeper, grid)
    assert decided.verdict == "supports"
    assert decided.because == ("ARM[residual_scaled_8].final-loss",
                               "ARM[plain_default_8].final-loss")


@pytest.mark.parametrize(("because", "message"), [
    ("STREAM.no-such-key", "cannot be evaluated"),
    ("CLAIM[blocks-nudge].verdict", "a value other than a verdict"),
    ("residual-stream-v4:STREAM.exact-in-order", "bad paths"),
])
def test_the_parser_checks_what_a_verdict_was_decided_from(because: str, message: str) -> None:
    text = (RECORDS_DIR / SCHEMAS["residual-stream-v4"].file_name).read_text(encoding="utf-8")
    told = "CLAIM key=stream-is-sum verdict=supports because=STREAM.exact-in-order\n"
    assert told in text
    with pytest.raises(TraceError, match=re.escape(message)):
        parse_trace(text.replace(told, told.replace("STREAM.exact-in-order", because)), "x.trace")
