"""The gradients lab's experiments (engine/experiments/gradient_flow/) against closed forms.

The experiments measure every gradient by backward; the closed forms below (f^L, (1+f)^L,
binomial path counts, the chapter's binary fractions, outer products) appear only here, as
checks. The full lab runs once per session (a few seconds); determinism and the rarer paths
(a diverging run, chunked batches) use small configurations.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from gradient_flow_support import lab_results

from engine.experiments.gradient_flow import LAB_SEED
from engine.experiments.gradient_flow.clipping import ClippingConfig, gradient_clipping
from engine.experiments.gradient_flow.common import CAP, capped, fate
from engine.experiments.gradient_flow.explorer import ExplorerConfig, explorer_grid
from engine.experiments.gradient_flow.gradient_paths import (
    RandomPathsConfig,
    _graded_contributions,
    every_path,
    random_paths,
    solve_exact,
)
from engine.experiments.gradient_flow.identity import IdentityConfig, identity_fit
from engine.experiments.gradient_flow.placement import PlacementConfig, norm_placement
from engine.experiments.gradient_flow.scalar import TenLayersConfig, depth_gradients, ten_layers
from engine.experiments.gradient_flow.silent import SilentConfig, silent_branches
from engine.experiments.gradient_flow.sweep import SweepConfig, depth_sweep
from engine.experiments.gradient_flow.training import StackTrainingConfig, trainability
from engine.experiments.registry import LabResults
from engine.worked_example import constants as c

# Both modules run the whole lab once (gradient_flow_support); one worker of the parallel fast
# loop takes them all, so it runs once there too.
pytestmark = pytest.mark.xdist_group("gradient-flow-lab")

SMALL_SWEEP = SweepConfig(width=4, hidden=8, batch=3, depths=(1, 3), activations=("relu",))
SMALL_PLACEMENT = PlacementConfig(width=4, hidden=8, batch=6, vocab=5, repeats=2, blocks=(3,),
                                  chunk=3)
SMALL_TRAINING = StackTrainingConfig(width=4, hidden=4, depths=(2,), samples=8, steps=6, points=3,
                                     seeds=(1,), lrs=(0.01,), inits=("default", "zero"))


@pytest.fixture(scope="session")
def lab() -> LabResults:
    return lab_results()


def close(got: float, want: float, rtol: float = 1e-12) -> bool:
    return abs(got - want) <= rtol * abs(want)


# -- 1. the +1 over ten layers ----------------------------------------------------------------

def test_ten_layers_are_powers_of_the_factor(lab: LabResults) -> None:
    layers = lab.ten_layers.layers
    assert [run.factor for run in lab.ten_layers.runs] == [-1.0, 0.1, 0.5, 0.9, 1.5]
    for run in lab.ten_layers.runs:
        f = run.factor
        assert close(run.plain, f**layers) and close(run.residual, (1 + f) ** layers)
        assert all(close(g, f ** (layers - depth))
                   for depth, g in enumerate(run.plain_by_depth))
        assert all(close(g, (1 + f) ** (layers - depth))
                   for depth, g in enumerate(run.residual_by_depth))


def test_ten_layers_fates_match_the_chapter(lab: LabResults) -> None:
    fates = {run.factor: (run.plain_fate, run.residual_fate) for run in lab.ten_layers.runs}
    assert fates[0.1] == ("vanished", "kept")  # ~1e-10 against ~2.594
    assert fates[1.5] == ("exploded", "exploded")
    assert fates[-1.0] == ("kept", "dead")  # (1 + f) = 0 kills the residual stack
    runs = {run.factor: run for run in lab.ten_layers.runs}
    assert close(runs[0.1].residual, 2.5937424601) and runs[0.1].plain < 1.1e-10


def test_fate_and_capped_helpers() -> None:
    assert [fate(g, 10.0) for g in (0.0, 0.05, -0.5, 11.0, -20.0)] == [
        "dead", "vanished", "kept", "exploded", "exploded"]
    assert capped([1.0, np.inf, -np.inf, np.nan]) == ((1.0, CAP, -CAP, CAP), True)
    assert capped([1.0, -2.0]) == ((1.0, -2.0), False)


# -- 2. the product expanded into paths -------------------------------------------------------

def test_chapter_paths_are_the_exact_binary_fractions(lab: LabResults) -> None:
    paths = lab.chapter_paths
    assert paths.contributions == (1.0, -1.0, 0.375, -0.0625, 0.00390625)
    assert paths.contributions == tuple(
        math.comb(4, k) * c.STACK_BRANCH_FACTOR**k for k in range(5))
    assert paths.total == paths.gradient == 0.31640625 == 0.75**4
    assert paths.counts == (1, 4, 6, 4, 1)
    assert paths.exact and paths.methods_agree and paths.components_equal
    assert paths.max_deviation == 0.0


def test_solve_exact_recovers_a_polynomial() -> None:
    from fractions import Fraction

    alphas = [Fraction(a) for a in (0, 1, 2, 3)]
    values = [Fraction(3) - 2 * a + a**3 / 4 for a in alphas]
    assert solve_exact(alphas, values) == [3, -2, 0, Fraction(1, 4)]


def test_random_paths_split_the_gradient(lab: LabResults) -> None:
    paths = lab.random_paths
    assert [p.length for p in paths.lengths] == list(range(paths.layers + 1))
    assert [p.count for p in paths.lengths] == [math.comb(16, k) for k in range(17)]
    assert paths.sum_deviation < 1e-12 and paths.vandermonde_deviation < 1e-4
    assert math.isclose(sum(p.share for p in paths.lengths), 1.0, rel_tol=1e-12)
    # Veit et al. (2016): the gradient comes from paths much shorter than the typical one.
    assert paths.peak_length < paths.layers // 2


def test_graded_split_equals_path_enumeration() -> None:
    """Each length's contribution is the sum over its paths of ȳ through their branches."""
    rng = np.random.default_rng(5)
    weights = [rng.normal(size=(3, 3)) for _ in range(3)]
    x, upstream = rng.normal(size=3), rng.normal(size=3)
    graded = _graded_contributions(weights, x, upstream)
    for k in range(4):
        total = np.zeros(3)
        for subset in itertools.combinations(range(3), k):
            jacobian = np.eye(3)
            for layer in subset:  # row-vector convention: h @ W_l, first layer first
                jacobian = jacobian @ weights[layer]
            total += jacobian @ upstream
        np.testing.assert_allclose(graded[k], total, rtol=1e-12, atol=1e-14)


def test_random_paths_are_deterministic() -> None:
    config = RandomPathsConfig(width=4, layers=3)
    assert random_paths(7, config) == random_paths(7, config)
    assert random_paths(7, config) != random_paths(8, config)


# -- 3. depth sweep ---------------------------------------------------------------------------

def test_sweep_identity_stack_passes_gradient_unchanged(lab: LabResults) -> None:
    sweep = lab.sweep
    curves = {curve.curve: curve for curve in sweep.curves}
    deepest = {stack.curve: stack for stack in sweep.deepest}
    for activation in sweep.activations:
        zero = curves[f"residual-zero-{activation}"]
        # Zero branches add exact zeros, so every depth hands back G itself and the stream
        # itself, bit for bit with any kernel: equal exactly.
        assert len(set(zero.input_gradient)) == 1
        assert zero.stream_norm == (sweep.input_norm,) * len(sweep.depths)
        # ‖G‖ = 1 up to rounding: G is scaled to norm one and its norm is a BLAS dot product,
        # which OpenBLAS's SkylakeX kernels round to one ulp below one.
        np.testing.assert_array_max_ulp(np.array(zero.input_gradient), np.ones(len(sweep.depths)),
                                       maxulp=2)
        assert set(deepest[f"residual-zero-{activation}"].first_weight_gradient) == {0.0}
        assert curves[f"residual-{activation}"].input_gradient[-1] > 1e6  # default init
        assert max(curves[f"residual-scaled-{activation}"].input_gradient) < 3.0
    for stack in sweep.deepest:
        assert stack.depth == 64 and len(stack.projection_gradient) == 64
        assert len(stack.stream_gradient) == len(stack.stream_norm) == 65
        assert math.isclose(stack.stream_gradient[-1], 1.0, rel_tol=1e-12)
        assert not stack.overflowed


def test_sweep_is_deterministic_and_shaped() -> None:
    first, second = depth_sweep(3, SMALL_SWEEP), depth_sweep(3, SMALL_SWEEP)
    assert first == second
    assert [curve.curve for curve in first.curves] == [
        "plain-relu", "residual-relu", "residual-scaled-relu", "residual-zero-relu",
        "prenorm-relu"]
    assert all(len(curve.input_gradient) == 2 for curve in first.curves)


# -- 4. three ways to be silent ---------------------------------------------------------------

def test_silent_first_step_gradients(lab: LabResults) -> None:
    x, upstream, weight = (np.array(c.INPUT_VALUES), np.array(c.UPSTREAM_VALUES),
                           np.array(c.WEIGHT_VALUES))
    first = {(row.case, row.parameter): row for row in lab.silent.rows if row.step == 1}
    assert first["zero-weight", "zero-weight.weight"].gradient == tuple(
        np.outer(x, upstream).ravel())
    assert first["zero-scale", "zero-scale.alpha"].gradient == (-3.25,)
    assert first["zero-scale", "zero-scale.alpha"].gradient == (float(upstream @ (x @ weight)),)
    assert first["zero-scale", "zero-scale.weight"].gradient_norm == 0.0
    assert first["zero-projection", "zero-projection.w1"].gradient_norm == 0.0
    assert first["zero-projection", "zero-projection.w2"].gradient == tuple(
        np.outer(x @ weight, upstream).ravel())


def test_silent_who_moves_when(lab: LabResults) -> None:
    cases = {case.case: case for case in lab.silent.cases}
    assert cases["zero-weight"].first_moved == (1,)
    assert cases["zero-scale"].first_moved == (1, 2)  # α first, then W
    assert cases["zero-projection"].first_moved == (2, 1)  # W2 first, then W1
    assert cases["all-zero"].first_moved == (0, 0)  # a saddle: nothing ever moves
    assert all(case.branch_norm[0] == 0.0 for case in cases.values())
    assert [row.index for row in lab.silent.rows] == list(range(lab.silent.last_row + 1))
    assert silent_branches(0, SilentConfig()) == lab.silent


# -- 5. where the norm goes -------------------------------------------------------------------

def test_placement_curves(lab: LabResults) -> None:
    curves = {curve.curve: curve for curve in lab.placement.curves}
    assert list(curves) == [f"{name}-{blocks}" for blocks in (12, 24) for name in (
        "postnorm", "prenorm", "prenorm-no-final-norm")]
    for curve in curves.values():
        assert len(curve.gradient_mean) == curve.blocks
        assert len(curve.stream_norm_squared) == curve.blocks + 1
        assert all(low <= mean <= high for low, mean, high in zip(
            curve.gradient_low, curve.gradient_mean, curve.gradient_high, strict=True))
    # Post-norm ends each block with an RMSNorm: ‖h‖² = width (up to eps).
    assert all(abs(v - 32) < 1e-3 for v in curves["postnorm-12"].stream_norm_squared[1:])
    pre = curves["prenorm-24"].stream_norm_squared
    assert all(b > a for a, b in itertools.pairwise(pre))  # the stream grows


def test_placement_chunks_do_not_change_the_gradient() -> None:
    whole = norm_placement(2, replace(SMALL_PLACEMENT, chunk=6))
    chunked = norm_placement(2, SMALL_PLACEMENT)
    for a, b in zip(whole.curves, chunked.curves, strict=True):
        np.testing.assert_allclose(a.gradient_mean, b.gradient_mean, rtol=1e-12)
        assert math.isclose(a.loss, b.loss, rel_tol=1e-12)
    assert chunked == norm_placement(2, SMALL_PLACEMENT)


# -- 6. trainability --------------------------------------------------------------------------

def test_training_curves(lab: LabResults) -> None:
    curves = {curve.curve: curve for curve in lab.training.curves}
    assert list(curves) == ["plain-2", "plain-8", "plain-32", "residual-2", "residual-8",
                            "residual-32"]
    for curve in curves.values():
        assert len(curve.loss) == len(curve.steps) == 50 and curve.steps[0] == 0
        assert not curve.diverged and curve.final_loss < curve.initial_loss
    # A zero-initialized residual stack starts as the identity: the same loss at every depth.
    assert len({curves[f"residual-{d}"].initial_loss for d in (2, 8, 32)}) == 1
    assert lab.training.precision == "float64"  # read off the trained weights


def test_training_divergence_is_flagged_and_capped() -> None:
    config = replace(SMALL_TRAINING, lr=1e6, lrs=(1e6,))
    curve = trainability(1, config).curves[0]
    assert curve.diverged and curve.final_loss == CAP
    assert all(math.isfinite(v) for v in curve.loss)
    assert trainability(1, SMALL_TRAINING) == trainability(1, SMALL_TRAINING)


def test_identity_fit_zero_start_stays_exact_and_a_divergence_is_capped() -> None:
    fitted = identity_fit(IdentityConfig(width=4, hidden=8, samples=16, steps=20,
                                         lrs=(0.1, 1e3), seeds=(1, 2)))
    arms = {arm.arm: arm for arm in fitted.arms}
    assert fitted.arm_names == tuple(arms) and len(arms) == 3 * 2
    assert arms["residual-zero-lr0.1"].final == (0.0, 0.0) == arms["residual-zero-lr0.1"].initial
    assert arms["plain-default-lr1000"].diverged == 2
    assert arms["plain-default-lr1000"].final == (CAP, CAP)
    best = {b.model: b for b in fitted.best}
    assert best["plain-default"].arm == "plain-default-lr0.1"
    assert best["plain-default"].median < best["plain-default"].initial


def test_clipping_keeps_an_exploding_stack_finite_and_judges_each_stack_at_its_best_rate(
        ) -> None:
    config = ClippingConfig(task=replace(SMALL_TRAINING, steps=20, points=4), depths=(12,),
                            lrs=(3.0, 30.0), clip_norm=0.5, seeds=(1, 2, 3))
    runs = gradient_clipping(config)
    arms = {arm.arm: arm for arm in runs.arms}
    assert runs.arm_names == tuple(arms) and len(arms) == 3 * 2
    assert runs.stacks == ("residual-default-12", "residual-default-12-clip0.5",
                           "residual-zero-12")
    assert arms["residual-default-12-lr3"].diverged == 3  # the default start explodes
    clipped = [arms[f"residual-default-12-clip0.5-lr{lr}"] for lr in ("3", "30")]
    assert all(arm.diverged == 0 for arm in clipped)  # a step is at most lr * clip_norm long
    best = {b.stack: b for b in runs.best}
    mine = best["residual-default-12-clip0.5"]
    assert mine.clipped and mine.lr == min(clipped, key=lambda a: a.median).lr
    assert mine.initial == best["residual-default-12"].initial  # the same weights and task
    assert math.isclose(runs.zero_loss, 1.0, rel_tol=1e-12)


# -- 7. explorer grid -------------------------------------------------------------------------

def test_explorer_contributions_are_binomial(lab: LabResults) -> None:
    explorer = lab.explorer
    assert len(explorer.cells) == len(explorer.factors) * explorer.max_depth == 416
    for cell in explorer.cells:
        f, depth = cell.factor, cell.depth
        assert close(cell.plain, f**depth) and close(cell.residual, (1 + f) ** depth)
        assert all(close(v, math.comb(depth, k) * f**k)
                   for k, v in enumerate(cell.contributions))
        assert math.isclose(sum(cell.contributions), cell.residual, rel_tol=1e-9,
                            abs_tol=1e-9 * max(abs(v) for v in cell.contributions))
        assert cell.contributions[-1] == cell.plain
    counts = {count.depth: count.counts for count in explorer.counts}
    assert counts[32] == tuple(math.comb(32, k) for k in range(33))
    ones = [cell for cell in explorer.cells if cell.factor == 1.0]
    assert all(cell.contributions == counts[cell.depth] for cell in ones)


def test_explorer_depth_is_a_shorter_stack() -> None:
    """Depth D is read at the last D layers of one deep stack: it equals a stack of depth D."""
    grid = explorer_grid(0, ExplorerConfig(max_depth=6, low=-1.0, high=1.0, step=0.5))
    factors = list(grid.factors)
    for residual in (False, True):
        alone = depth_gradients(factors, 4, residual, 1.0, 1.0)[0]
        read = [getattr(curve, "residual" if residual else "plain")[3] for curve in grid.curves]
        assert read == alone.tolist()


def test_ten_layers_ignores_seed() -> None:
    assert ten_layers(0, TenLayersConfig()) == ten_layers(LAB_SEED, TenLayersConfig())


def test_every_path_is_enumerated_once_and_sums_to_the_graded_split(lab) -> None:
    paths = lab.random_paths
    assert paths.enumeration_deviation < 1e-12
    for found in paths.magnitudes:
        assert found.lengths == tuple(range(paths.layers + 1))
        assert all(lo <= mean <= hi for lo, mean, hi in zip(found.low, found.mean, found.high,
                                                             strict=True))
        counts = [math.comb(paths.layers, k) for k in found.lengths]
        assert all(math.isclose(total, count * mean, rel_tol=1e-12)
                   for total, count, mean in zip(found.total, counts, found.mean, strict=True))
    # one path through a branch is one matrix product more: its magnitude falls with the gain
    half = next(m for m in paths.magnitudes if m.gain == paths.gain)
    assert half.mean[-1] < half.mean[paths.layers // 2] < half.mean[0]
    peaks = [m.peak_length for m in sorted(paths.magnitudes, key=lambda m: m.gain)]
    assert peaks == sorted(peaks) and peaks[0] < peaks[-1]


def test_a_path_vector_is_the_product_of_its_branches() -> None:
    rng = np.random.default_rng(0)
    weights = [rng.normal(size=(3, 3)) for _ in range(3)]
    upstream = rng.normal(size=3)
    paths, lengths = every_path(weights, upstream)
    assert paths.shape == (8, 3) and sorted(lengths.tolist()) == [0, 1, 1, 1, 2, 2, 2, 3]
    through_all = upstream @ weights[2].T @ weights[1].T @ weights[0].T
    assert np.allclose(paths[lengths == 3][0], through_all, rtol=1e-14)
