"""Tests for the declared invariants of every trace: a trace must agree with itself.

Every invariant gets a well-formed but false trace (one value changed) that the parser must
reject at the right line, naming the invariant and both sides; the golden traces pass all.
"""

from __future__ import annotations

import re

import pytest
from paths import RECORDS_DIR

from tracefile import SCHEMAS, parse_trace
from tracefile.errors import TraceError

# invariant → (text replaced once, replacement, line reported), for the chapter's trace
CHAPTER = {
    "FORWARD.output = FORWARD.input + FORWARD.branch": (
        "output=[1.0,-3.25]", "output=[1.0,-3.5]"),
    "BACKWARD.identity = BACKWARD.upstream": (
        "identity=[1.0,1.0]", "identity=[1.0,0.5]"),
    "BACKWARD.input = BACKWARD.identity + BACKWARD.branch": (
        "input=[0.5,3.25]", "input=[0.5,3.5]"),
    "PARAMETER.gradient = FORWARD.inputᵀ BACKWARD.upstream": (
        "gradient=[2.0,2.0,-1.0,-1.0]", "gradient=[2.0,2.0,-7.5,-1.0]"),
    "ZERO-BRANCH.output = FORWARD.input": (
        "ZERO-BRANCH name=residual.zero.weight output=[2.0,-1.0]",
        "ZERO-BRANCH name=residual.zero.weight output=[2.0,-1.5]"),
    "ZERO-BRANCH.input-gradient = BACKWARD.upstream": (
        "input-gradient=[1.0,1.0]", "input-gradient=[1.0,2.0]"),
    "ZERO-BRANCH.weight-gradient-nonzero = (ZERO-BRANCH.weight-gradient ≠ zero)": (
        "weight-gradient-nonzero=true", "weight-gradient-nonzero=false"),
    "SHARED-OPERAND.gradient = twice SHARED-OPERAND.upstream": (
        "SHARED-OPERAND upstream=[1.0,1.0] gradient=[2.0,2.0]",
        "SHARED-OPERAND upstream=[1.0,1.0] gradient=[2.0,1.0]"),
    "STACK-CONFIG.residual-factor = one + STACK-CONFIG.branch-factor": (
        "residual-factor=0.75", "residual-factor=0.5"),
    "STACK at depth zero = FORWARD.input, plain and residual": (
        "STACK depth=0 plain=[2.0,-1.0]", "STACK depth=0 plain=[2.0,-2.0]"),
    "RETENTION.depth = STACK-CONFIG.layers": (
        "RETENTION depth=4", "RETENTION depth=5"),
    "RETENTION = STACK-GRADIENT / BACKWARD.upstream, first components, plain and residual": (
        "RETENTION depth=4 plain=0.00390625", "RETENTION depth=4 plain=0.0078125"),
    "ZERO-INPUT.jacobian = CONFIG.weightᵀ": (
        "jacobian=[0.5,2.0,-1.0,0.25]", "jacobian=[0.5,-1.0,2.0,0.25]"),
    "SILENT-SCALE.output = FORWARD.input (a zero scale silences the branch)": (
        "SILENT-SCALE alpha=0.0 output=[2.0,-1.0]", "SILENT-SCALE alpha=0.0 output=[1.0,-3.25]"),
    "SILENT-SCALE.alpha-gradient = FORWARD.branch · BACKWARD.upstream": (
        "alpha-gradient=-3.25", "alpha-gradient=-3.0"),
    "SILENT-SCALE.weight-moves-first = (SILENT-SCALE.weight-gradient ≠ zero)": (
        "weight-moves-first=false", "weight-moves-first=true"),
    "GRADCHECK.passed = (GRADCHECK.max-error ≤ GRADCHECK.tolerance)": (
        "max-error=5.869134673213756e-10", "max-error=0.5"),
}


VERDICT_WORDS = ("each declared claim has one CLAIM record, its verdict a verdict word decided "
                 "from values of this trace")


def verdict_word_break(trace_id: str) -> tuple[str, str]:
    """The last claim's verdict made a word that is no verdict, reported at the first CLAIM line
    (the parser checks the words, never the rule: a verdict swapped for another verdict parses,
    and only a fresh run, ``python -m engine record --verify``, tells it apart)."""
    text = (RECORDS_DIR / SCHEMAS[trace_id].file_name).read_text(encoding="utf-8")
    last = [line for line in text.splitlines() if line.startswith("CLAIM ")][-1]
    return last, re.sub(r"verdict=[a-z]+", "verdict=proves", last)


GRADIENT_FLOW = {
    "CHAPTER-PATHS.counts = C(layers, k) for every k from zero to layers": (
        "counts=[1,4,6,4,1]", "counts=[1,4,5,4,1]"),
    "CHAPTER-PATHS.exact ⇒ CHAPTER-PATHS.total = CHAPTER-PATHS.gradient": (
        "total=0.31640625 gradient", "total=0.3 gradient"),
    "RANDOM-PATH.count = C(RANDOM-PATHS.layers, length) for every length": (
        "RANDOM-PATH length=2 count=120 ", "RANDOM-PATH length=2 count=121 "),
    "PATH-COUNT.counts = C(depth, k) for every k, at every depth up to "
    "EXPLORER-CONFIG.max-depth": (
        "PATH-COUNT depth=1 counts=[1,1]", "PATH-COUNT depth=1 counts=[1,2]"),
    "EXPLORER-CONFIG: one cell per factor and depth, last-cell the count less one": (
        "EXPLORER-CONFIG max-depth=32 ", "EXPLORER-CONFIG max-depth=31 "),
    "ARM median, low and high are those of its final-loss": (
        "median=0.5148128449441557 low=0.465954131077576", "median=0.5148128449441557 low=0.4"),
    "BEST is each architecture's arm with the lowest median": (
        "BEST stack=plain-default-2 arm=plain-default-2-lr0.03 lr=0.03",
        "BEST stack=plain-default-2 arm=plain-default-2-lr0.03 lr=0.01"),
    "IDENTITY spreads follow from the seeds, IDENTITY-BEST has the lowest median": (
        "median=0.049105480931762174", "median=0.05"),
    "CLIP-ARM spreads follow from the seeds, CLIP-BEST is each stack's arm with the lowest "
    "median": ("median=0.006469361691186393 low=0.0003206595602547834",
               "median=0.0065 low=0.0003206595602547834"),
    "PATH-MAGNITUDE.peak-length is the length with the largest total": (
        "peak-length=3\nPATH-MAGNITUDE gain=0.5", "peak-length=4\nPATH-MAGNITUDE gain=0.5"),
    VERDICT_WORDS: verdict_word_break("gradient-flow-v4"),
}

RESIDUAL_STREAM = {
    "MEMORY.total = the sum of HOLDER bytes": ("total=12065144 ", "total=12065145 "),
    "STREAM.relative-error = STREAM.max-error / STREAM.max-stream": (
        "relative-error=5.210163588760298e-16", "relative-error=5.2e-16"),
    "EARLY-EXIT.loss at threshold zero = EARLY-EXIT-CONFIG.full-loss": (
        "EARLY-EXIT threshold=0.0 mean-blocks=8.0 loss=1.2723035202121271",
        "EARLY-EXIT threshold=0.0 mean-blocks=8.0 loss=1.28"),
    "LENS.residual ends at PRUNING.angular's first loss (nothing pruned)": (
        "1.2723035202121271] plain=", "1.28] plain="),
    "ARM median, low and high are those of its final-validation": (
        "median=1.2616441713835664 low=1.2501191814502557 high=1.310549954454342 sum",
        "median=1.2616441713835664 low=1.2401191814502557 high=1.310549954454342 sum"),
    "BEST is each architecture's arm with the lowest median": (
        "BEST curve=residual-prenorm-two arm=residual-prenorm-two-lr0.01-warmup0 lr=0.01",
        "BEST curve=residual-prenorm-two arm=residual-prenorm-two-lr0.01-warmup0 lr=0.003"),
    "SERIES are the ARM records of one architecture and warm-up": (
        "lrs=[0.001,0.003,0.01] median=[1.4325948618129343,",
        "lrs=[0.001,0.003,0.01] median=[1.5,"),
    "REORDER: one swap per neighbouring pair, its increases from its losses": (
        "worst-increase=1.379040879622326", "worst-increase=1.38"),
    "INTENSITY: each intensity is its flops over its bytes, the ratio theirs": (
        "ratio=0.012168169636389975", "ratio=0.0121"),
    "LONG spreads, its arm (the BEST) and its flatness follow from its values": (
        "last-drop=0.07786726951599121 flat=false", "last-drop=0.07786726951599121 flat=true"),
    VERDICT_WORDS: verdict_word_break("residual-stream-v4"),
}

#: The invariants that report a break at the first record of a kind, not at the broken line.
AT_FIRST = {VERDICT_WORDS: "CLAIM ",
            "RANDOM-PATH.count = C(RANDOM-PATHS.layers, length) for every length": "RANDOM-PATH ",
            "CLIP-ARM spreads follow from the seeds, CLIP-BEST is each stack's arm with the lowest "
            "median": "CLIP-ARM ",
            "ARM median, low and high are those of its final-validation": "ARM ",
            "LONG spreads, its arm (the BEST) and its flatness follow from its values": "LONG "}

BREAKS = {"residual-connections-v2": CHAPTER, "gradient-flow-v4": GRADIENT_FLOW,
          "residual-stream-v4": RESIDUAL_STREAM}
CASES = [(trace_id, text) for trace_id, breaks in BREAKS.items() for text in sorted(breaks)]


def golden(trace_id: str) -> str:
    return (RECORDS_DIR / SCHEMAS[trace_id].file_name).read_text(encoding="utf-8")


@pytest.mark.parametrize("trace_id", SCHEMAS)
def test_every_invariant_has_a_breaking_case(trace_id: str) -> None:
    assert sorted(BREAKS[trace_id]) == sorted(i.text for i in SCHEMAS[trace_id].invariants)
    assert SCHEMAS[trace_id].invariants, f"{trace_id} declares no invariant"


@pytest.mark.parametrize("trace_id", SCHEMAS)
def test_the_golden_trace_holds_every_invariant(trace_id: str) -> None:
    parse_trace(golden(trace_id), trace_id, SCHEMAS[trace_id])


@pytest.mark.parametrize("trace_id", SCHEMAS)
def test_invariant_texts_hold_no_digits(trace_id: str) -> None:
    # The Trace page lists them as prose: a digit there would be an untraced number.
    from diagrams.format import number_tokens

    for invariant in SCHEMAS[trace_id].invariants:
        assert not number_tokens(invariant.text), invariant.text


@pytest.mark.parametrize(("trace_id", "text"), CASES)
def test_a_false_but_well_formed_trace_is_rejected(trace_id: str, text: str) -> None:
    old, new = BREAKS[trace_id][text]
    trace_text = golden(trace_id)
    assert old in trace_text, old
    # Reported at the broken line, or at the first record of its kind (counted from one).
    rows = trace_text.splitlines()
    line = (next(n for n, row in enumerate(rows, 1) if row.startswith(AT_FIRST[text]))
            if text in AT_FIRST else trace_text[:trace_text.index(old)].count("\n") + 1)
    with pytest.raises(TraceError) as caught:
        parse_trace(trace_text.replace(old, new, 1), "false.trace", SCHEMAS[trace_id])
    message = str(caught.value)
    assert message.startswith(f"false.trace:{line}: invariant {text} does not hold: ")
    assert "the left side is" in message and "the right side" in message
