"""The residual-stream lab's analyses (engine/experiments/residual_stream/) on small models.

Nothing here trains the lab's models: each analysis is checked on small decoders built from
a declared configuration (untrained, or trained for a handful of steps), against exact
identities (a walk is the engine's forward, threshold zero runs every block, deleting a silent
block changes nothing) and closed forms (bf16 rounding, flop counts, tape bytes). The full lab
runs once, in the slow golden test of tests/test_trace_residual_stream.py.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from engine.data import ArithmeticCorpus
from engine.experiments.residual_stream.common import MAX_POINTS, mean_loss, walk
from engine.experiments.residual_stream.corpus import corpus_facts
from engine.experiments.residual_stream.cost import flops, intensity, tape_memory
from engine.experiments.residual_stream.long_training import LongTrainingConfig, long_training
from engine.experiments.residual_stream.precision import (
    lost_fraction,
    precision,
    round_bf16,
    round_fp16,
)
from engine.experiments.residual_stream.projection import (
    ProjectionConfig,
    projection,
    shortcut_matrix,
)
from engine.experiments.residual_stream.quantization import quantization, quantize, quantized_copy
from engine.experiments.residual_stream.stream import early_exit, logit_lens, stream_sum
from engine.experiments.residual_stream.surgery import (
    lesions,
    pruning,
    reordering,
    skipped_loss,
    swapped,
)
from engine.experiments.residual_stream.training import DecoderTrainingConfig, trainability
from engine.models import Decoder, DecoderConfig

SMALL = dict(width=8, depth=3, heads=2, mlp_ratio=2, seed=5)
TINY_TRAINING = DecoderTrainingConfig(width=8, heads=2, mlp_ratio=2, depths=(1, 2), steps=4,
                                      batch=2, eval_every=2, eval_sequences=2, curve_points=2,
                                      seeds=(3, 4), lrs=(1e-2, 3e-3),
                                      postnorm_arms=((1e-2, 0), (1e-2, 2)))


@pytest.fixture(scope="module")
def corpus() -> ArithmeticCorpus:
    return ArithmeticCorpus()


@pytest.fixture(scope="module")
def data(corpus: ArithmeticCorpus) -> tuple[np.ndarray, np.ndarray]:
    return corpus.fixed_sequences("validation", 6)


def decoder(corpus: ArithmeticCorpus, **changes: object) -> Decoder:
    settings = {**SMALL, **changes}
    return Decoder(DecoderConfig(vocab_size=corpus.tokenizer.vocab_size,
                                 context=corpus.sequence_length, **settings))


@pytest.mark.parametrize("variant, norm", [("residual", "pre"), ("plain", "pre"),
                                           ("residual", "post")])
def test_walk_is_the_engines_forward_bit_for_bit(corpus, data, variant, norm) -> None:
    model = decoder(corpus, variant=variant, norm=norm)
    run = model.forward(data[0])
    states = walk(model, data[0])
    assert len(states) == SMALL["depth"] + 1
    for ours, engine in zip(states, run.streams, strict=True):
        assert np.array_equal(ours, engine.value)
    assert mean_loss(model, states[-1], data[1]) == pytest.approx(
        float(model.loss(*data).value), rel=1e-13)


def test_stream_is_the_embedding_plus_every_write(corpus, data) -> None:
    result = stream_sum(decoder(corpus), decoder(corpus, variant="plain"), data[0])
    assert result.exact_in_order and result.max_error < 1e-12
    assert len(result.stream_norm) == 4 and len(result.cosine) == 3
    assert all(-1.0 <= c <= 1.0 for c in (*result.cosine, *result.plain_cosine))
    assert result.relative_error == result.max_error / result.max_stream


def test_logit_lens_ends_at_the_models_loss(corpus, data) -> None:
    model, plain = decoder(corpus), decoder(corpus, variant="plain")
    lens = logit_lens(model, plain, *data)
    assert len(lens.residual) == 4
    assert lens.residual[-1] == pytest.approx(float(model.loss(*data).value), rel=1e-13)
    assert lens.final_minus_best == lens.residual[-1] - min(lens.residual)


def test_early_exit_thresholds_zero_and_huge(corpus, data) -> None:
    model = decoder(corpus)
    result = early_exit(model, *data, (0.0, 1e300))
    never, always = result.points
    assert (never.mean_blocks, never.loss, never.stopped_early) == (3.0, result.full_loss, 0.0)
    # Everyone stops after the first block: the loss is the lens at the first state.
    assert (always.mean_blocks, always.stopped_early) == (1.0, 1.0)
    assert always.loss == logit_lens(model, model, *data).residual[1]


def test_deleting_a_silent_block_changes_nothing(corpus, data) -> None:
    silent = decoder(corpus, output_init="zero")
    intact = skipped_loss(silent, *data, ())
    assert all(skipped_loss(silent, *data, (k,)) == intact for k in range(3))
    (cut,) = lesions({"silent": silent}, *data)
    assert cut.loss == (intact,) * 3 and cut.median_increase == 0.0


def test_swapping_neighbours_of_silent_blocks_changes_nothing(corpus, data) -> None:
    silent = decoder(corpus, output_init="zero")
    result = reordering("silent", silent, *data)
    assert result.loss == (result.intact,) * 2 and result.worst_increase == 0.0
    model = decoder(corpus)
    first = swapped(model, 0)
    assert first.blocks[:2] == model.blocks[1::-1] and first.blocks[2] is model.blocks[2]
    assert skipped_loss(swapped(first, 0), *data, ()) == skipped_loss(model, *data, ())
    assert reordering("model", model, *data).loss[0] == skipped_loss(first, *data, ())


def test_pruning_nothing_and_everything(corpus, data) -> None:
    model = decoder(corpus)
    result = pruning(model, *data)
    lens = logit_lens(model, model, *data).residual
    for curve in (result.angular, result.each, result.last):
        assert len(curve) == 4 and curve[0] == lens[-1] and curve[-1] == lens[0]
    assert result.last[1] == skipped_loss(model, *data, (2,))
    assert all(0.0 <= d <= 1.0 for d in result.block_distance)


def test_quantize_is_symmetric_per_output_channel() -> None:
    weight = np.random.default_rng(3).standard_normal((6, 4))
    for bits in (8, 4):
        levels = 2 ** (bits - 1) - 1
        scale = np.max(np.abs(weight), axis=0) / levels
        q = quantize(weight, bits)
        integers = q / scale
        assert np.allclose(integers, np.round(integers))
        assert np.max(np.abs(integers)) <= levels + 1e-9
        assert np.allclose(np.max(np.abs(q), axis=0), np.max(np.abs(weight), axis=0))
        assert np.all(np.abs(q - weight) <= scale / 2 + 1e-15)


def test_quantization_leaves_the_model_alone(corpus, data) -> None:
    model = decoder(corpus)
    before = model.snapshot()
    copy = quantized_copy(model, 4)
    after = model.snapshot()
    assert all(np.array_equal(before[name], after[name]) for name in before)
    assert np.array_equal(copy.snapshot()["embed.token"], before["embed.token"])
    assert not np.array_equal(copy.snapshot()["block0.mlp.w1"], before["block0.mlp.w1"])
    results = quantization({"residual": model}, (8, 4), *data)
    assert [r.case for r in results] == ["residual-eight-bit", "residual-four-bit"]
    assert results[0].stream_error[0] == 0.0
    assert results[0].logit_error < results[1].logit_error


def test_bf16_rounds_half_to_even_and_overflows() -> None:
    ulp = 2.0**-7
    values = np.array([1.0 + ulp / 2, 1.0 + 1.5 * ulp, -3.0, 3.0e38, 3.5e38, 1e-40])
    rounded = round_bf16(values)
    assert rounded[:4].tolist() == [1.0, 1.0 + 2 * ulp, -3.0, round_bf16(np.array([3.0e38]))[0]]
    assert math.isinf(rounded[4]) and rounded[5] != 0.0


def test_an_update_below_half_an_ulp_is_lost_entirely() -> None:
    x = np.full((2, 3), 2048.0)  # fp16 spacing is 2 there
    assert lost_fraction(x, np.full((2, 3), 0.5), round_fp16) == 1.0
    assert lost_fraction(x, np.full((2, 3), 4.0), round_fp16) == 0.0


def test_precision_runs_on_a_small_model(corpus, data) -> None:
    result = precision(decoder(corpus), *data)
    fp, bf = result.formats
    assert (fp.format, bf.format) == ("fp-sixteen", "bf-sixteen")
    assert not fp.overflowed and fp.headroom > 1.0
    assert len(fp.update_lost) == 3 and len(result.stream_max) == 4


def test_flop_counts() -> None:
    counted = flops("lab", width=4, depth=2, context=3, hidden=8, heads=2)
    assert (counted.add, counted.attention, counted.mlp) == (8.0, 128.0 + 32.0, 128.0)
    assert counted.add_share == 8.0 / (8.0 + 160.0 + 128.0)


def test_tape_memory_counts_each_array_once(corpus) -> None:
    model = decoder(corpus)
    memory = tape_memory(model, corpus, batch=2, seed=1)
    held = {h.holder: h.bytes for h in memory.holders}
    assert memory.total == sum(held.values())
    assert held["parameters"] == model.parameter_count() * 8
    tokens = 2 * corpus.sequence_length
    # x_0 .. x_L and the L states between attention and MLP, float64.
    assert held["stream"] == (2 * 3 + 1) * tokens * 8 * 8
    assert held["attention-scores"] == 3 * 2 * 2 * corpus.sequence_length ** 2 * 8


@pytest.mark.parametrize("precision, size", [("float64", 8), ("float32", 4)])
def test_intensity_counts_the_residual_adds_by_hand(corpus, precision, size) -> None:
    counted = intensity(decoder(corpus, precision=precision), corpus, batch=2, seed=1)
    elements = 2 * corpus.sequence_length * SMALL["width"]
    adds = 2 * SMALL["depth"]  # two per block
    assert (counted.add_flops, counted.add_bytes) == (adds * elements, adds * 3 * elements * size)
    assert counted.add_intensity == 1 / (3 * size) and counted.precision == precision
    assert counted.ratio == counted.add_intensity / counted.matmul_intensity < 1


def test_shortcuts(corpus) -> None:
    rng = np.random.default_rng(0)
    w = shortcut_matrix("orthogonal", rng, 4, 6, 0.25)
    assert np.allclose(w @ w.T, np.eye(4))
    config = ProjectionConfig(widths=(4, 6, 8), batch=5)
    result = projection(2, config)
    kinds = {s.kind: s for s in result.shortcuts}
    assert kinds["identity"].widths == (4, 4, 4)
    for shortcut in result.shortcuts:
        assert shortcut.gradient[-1] == pytest.approx(math.sqrt(1 / 5), rel=1e-12)
        assert shortcut.ratio == shortcut.gradient[0] / shortcut.gradient[-1]
    assert kinds["badly-scaled"].ratio < kinds["random"].ratio


def test_tiny_trainability_and_corpus_facts(corpus, monkeypatch) -> None:
    monkeypatch.delenv("ENGINE_CELL_CACHE", raising=False)
    stream = io.StringIO()
    result = trainability(corpus, 3, TINY_TRAINING, stream)
    assert [r.curve for r in result.runs] == [
        "residual-prenorm-one", "residual-prenorm-two", "plain-prenorm-one",
        "plain-prenorm-two", "residual-postnorm-one", "residual-postnorm-two"]
    # one line for the grid, then one per arm: four pre-norm architectures at two rates, and
    # post-norm with and without warm-up at each of the two depths
    assert stream.getvalue().count("\n") == 1 + 4 * 2 + 2 * 2 and "12 arms" in stream.getvalue()
    assert len(result.arms) == 12 and all(a.seeds == (3, 4) for a in result.arms)
    for run in result.runs:
        assert run.eval_steps == (2, 4) and len(run.validation) <= MAX_POINTS
        assert not run.diverged and run.sum_digit_loss > 0 and 0 <= run.accuracy <= 1
    for arm in result.arms:
        assert arm.low <= arm.median <= arm.high and len(arm.final_validation) == 2
        assert all(lo <= hi for lo, hi in zip(arm.curve_low, arm.curve_high, strict=True))
    lab = next(a for a in result.arms if a.arm == "residual-prenorm-two-lr0.01-warmup0")
    assert result.run("residual-prenorm-two").final_validation == lab.final_validation[0]
    best = {b.curve: b for b in result.best}
    assert best["residual-postnorm-two"].median == min(
        a.median for a in result.arms if a.curve == "residual-postnorm-two")
    facts = corpus_facts(corpus)
    assert (facts.vocab, facts.sequence_length, facts.validation_problems) == (13, 30, 1000)
    assert facts.generator == corpus.reference_losses.generator
    assert result.precision == "float32" and result.setting == TINY_TRAINING.setting()


@pytest.mark.parametrize("tolerance, flat", [(10.0, True), (-10.0, False)])
def test_tiny_long_runs_train_at_the_best_rate_and_test_flatness(corpus, monkeypatch,
                                                                  tolerance, flat) -> None:
    monkeypatch.delenv("ENGINE_CELL_CACHE", raising=False)
    trained = trainability(corpus, 3, TINY_TRAINING)
    config = LongTrainingConfig(curves=("plain-prenorm-two",), steps=8, eval_every=2,
                                seeds=(3, 4), window=0.5, tolerance=tolerance)
    long = long_training(corpus, config, TINY_TRAINING.setting(), trained)
    (run,) = long.runs
    best = next(b for b in trained.best if b.curve == "plain-prenorm-two")
    assert (run.arm, run.lr, run.warmup, run.steps) == (best.arm, best.lr, best.warmup, 8)
    assert run.eval_steps == (2, 4, 6, 8) and run.window_start == 4
    assert run.last_drop == run.curve_median[1] - run.curve_median[-1]
    assert run.flat is flat and run.low <= run.median <= run.high
    assert long.steps == 8 and long.curves == ("plain-prenorm-two",)
