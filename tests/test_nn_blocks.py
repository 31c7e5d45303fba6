"""Tests for engine/nn/blocks.py: every variant computes its formula, names, seeds, inits and
gradients of a whole stack against central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from opcheck import check_op, sample

from engine.errors import ConfigError, ShapeError
from engine.nn import Block, BlockStackConfig, build_stack, write_only
from engine.nn.blocks import VARIANTS
from engine.tensor import TensorValue

DEPTH, WIDTH, HIDDEN = 3, 4, 6


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


ACT = {"relu": lambda x: np.maximum(x, 0.0), "gelu": gelu, "tanh": np.tanh,
       "identity": lambda x: x}


def rms(x, w):
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + 1e-5) * w


def layer(x, w, b):
    c = x - x.mean(axis=-1, keepdims=True)
    return c / np.sqrt(np.mean(c**2, axis=-1, keepdims=True) + 1e-5) * w + b


def reference_block(p, i, h, variant, activation, norm):
    """One block recomputed in numpy from parameter values and the documented formula."""
    def normed(x):
        if norm == "rms":
            return rms(x, p[f"block{i}.norm.weight"])
        return layer(x, p[f"block{i}.norm.weight"], p[f"block{i}.norm.bias"])

    def branch(x):
        return ACT[activation](x @ p[f"block{i}.w1"]) @ p[f"block{i}.w2"]

    if variant == "plain":
        return branch(h)
    if variant == "residual":
        return h + branch(h)
    if variant == "scaled":
        return h + p[f"block{i}.alpha"] * branch(h)
    if variant == "prenorm":
        return h + branch(normed(h))
    return normed(h + branch(h))


def reference(stack, h, variant, activation, norm):
    p = {name: t.value for name, t in stack.named_parameters().items()}
    for i in range(stack.config.depth):
        h = reference_block(p, i, h, variant, activation, norm)
    return h


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("activation", ["relu", "gelu", "tanh", "identity"])
@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_every_variant_computes_its_formula(variant, activation, norm):
    stack = build_stack(DEPTH, WIDTH, HIDDEN, variant, seed=3, activation=activation, norm=norm,
                        alpha_init=0.7)
    h = sample(2, 5, WIDTH, seed=81)
    out = stack(h)
    assert out.shape == h.shape
    np.testing.assert_allclose(out.value, reference(stack, h, variant, activation, norm),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(WIDTH,), (7, WIDTH), (2, 3, WIDTH)])
def test_stream_keeps_the_input_shape_at_every_block(shape):
    stack = build_stack(DEPTH, WIDTH, HIDDEN, "prenorm", seed=0)
    states = stack.stream(sample(*shape, seed=82))
    assert len(states) == DEPTH + 1 and all(s.shape == shape for s in states)
    np.testing.assert_array_equal(states[0].value, sample(*shape, seed=82))


def test_parameter_names_and_order():
    names = {v: list(build_stack(2, WIDTH, HIDDEN, v, seed=0, norm="layer").named_parameters())
             for v in VARIANTS}
    assert names["plain"] == names["residual"] == ["block0.w1", "block0.w2", "block1.w1",
                                                   "block1.w2"]
    assert names["scaled"][:3] == ["block0.w1", "block0.w2", "block0.alpha"]
    # A block lists a sublayer's norm before its weights, wherever the norm acts.
    assert names["prenorm"][:4] == names["postnorm"][:4] == [
        "block0.norm.weight", "block0.norm.bias", "block0.w1", "block0.w2"]
    stack = build_stack(2, WIDTH, HIDDEN, "residual", seed=0)
    assert stack.named_parameters()["block1.w2"].shape == (HIDDEN, WIDTH)
    assert stack.named_parameters()["block1.w1"].shape == (WIDTH, HIDDEN)
    assert all(p.requires_grad and p.is_leaf for p in stack.parameters())


def test_one_seed_gives_one_stack():
    def values(**kwargs):
        stack = build_stack(DEPTH, WIDTH, HIDDEN, "residual", **kwargs)
        return {n: p.value for n, p in stack.named_parameters().items()}

    first, again, other = values(seed=5), values(seed=5), values(seed=6)
    assert all(np.array_equal(first[n], again[n]) for n in first)
    assert not any(np.array_equal(first[n], other[n]) for n in first)
    # W1 does not depend on how W2 is initialized.
    zero = values(seed=5, init="zero")
    assert all(np.array_equal(first[f"block{i}.w1"], zero[f"block{i}.w1"]) for i in range(DEPTH))


def test_output_initializations():
    default = build_stack(DEPTH, WIDTH, HIDDEN, "residual", seed=2).named_parameters()
    scaled = build_stack(DEPTH, WIDTH, HIDDEN, "residual", seed=2, init="scaled")
    np.testing.assert_allclose(scaled.named_parameters()["block1.w2"].value,
                               default["block1.w2"].value / math.sqrt(2 * DEPTH), rtol=1e-15)
    h = sample(3, WIDTH, seed=83)
    for variant in ("residual", "prenorm", "scaled"):
        zero = build_stack(DEPTH, WIDTH, HIDDEN, variant, seed=2, init="zero")
        assert not zero.named_parameters()["block0.w2"].value.any()
        np.testing.assert_array_equal(zero(h).value, h)  # every branch is the zero function


def test_activation_picks_the_w1_initializer():
    relu = build_stack(1, 200, 300, "residual", seed=0).named_parameters()["block0.w1"]
    tanh = build_stack(1, 200, 300, "residual", seed=0, activation="tanh")
    assert relu.value.std() == pytest.approx(math.sqrt(2 / 200), rel=0.02)
    assert tanh.named_parameters()["block0.w1"].value.std() == pytest.approx(
        math.sqrt(2 / 500), rel=0.02)


@pytest.mark.parametrize("variant", VARIANTS)
def test_input_gradient_of_a_stack_matches_central_differences(variant):
    stack = build_stack(2, WIDTH, HIDDEN, variant, seed=4, activation="gelu", alpha_init=0.5)
    check_op(stack, sample(3, WIDTH, seed=84))


def numeric_parameter_gradient(loss, parameter, step=1e-6):
    original, grad = parameter.value_snapshot(), np.zeros(parameter.shape)
    for index in np.ndindex(parameter.shape):
        values = []
        for delta in (step, -step):
            probe = original.copy()
            probe[index] += delta
            parameter.set_value(probe)
            values.append(float(loss().value))
        grad[index] = (values[0] - values[1]) / (2 * step)
    parameter.set_value(original)
    return grad


@pytest.mark.parametrize(("variant", "norm"), [("scaled", "rms"), ("prenorm", "layer"),
                                               ("postnorm", "rms"), ("plain", "rms")])
def test_parameter_gradients_match_central_differences(variant, norm):
    stack = build_stack(2, WIDTH, HIDDEN, variant, seed=7, activation="tanh", norm=norm,
                        alpha_init=0.5)
    h, seed = sample(3, WIDTH, seed=85), sample(3, WIDTH, seed=86)

    def loss():
        return (stack(h) * seed).sum_axis(-1).sum_axis(0)

    loss().backward()
    for name, parameter in stack.named_parameters().items():
        numeric = numeric_parameter_gradient(loss, parameter)
        np.testing.assert_allclose(parameter.gradient(), numeric, atol=1e-6, rtol=1e-6,
                                   err_msg=name)


def test_rezero_default_only_alpha_learns_at_initialization():
    stack = build_stack(2, WIDTH, HIDDEN, "scaled", seed=0)
    stack(sample(2, WIDTH, seed=87)).sum_axis(-1).sum_axis(0).backward()
    grads = {n: p.gradient() for n, p in stack.named_parameters().items()}
    assert not grads["block0.w1"].any() and not grads["block0.w2"].any()
    assert grads["block0.alpha"] != 0.0


def test_bad_settings_and_shapes():
    with pytest.raises(ConfigError) as caught:
        build_stack(2, WIDTH, HIDDEN, "highway", seed=0)
    assert str(caught.value) == (
        "build_stack: variant must be one of plain, residual, scaled, prenorm, postnorm; "
        "got 'highway'"
    )
    with pytest.raises(ConfigError, match=r"^build_stack: init must be one of"):
        build_stack(2, WIDTH, HIDDEN, seed=0, init="orthogonal")
    with pytest.raises(ConfigError, match=r"^build_stack: depth must be a positive int, got 0"):
        build_stack(0, WIDTH, HIDDEN, seed=0)
    with pytest.raises(ConfigError, match=r"^build_stack: seed must be an int >= 0, got None"):
        BlockStackConfig(1, WIDTH, HIDDEN, "plain", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        build_stack(2, WIDTH, HIDDEN)  # type: ignore[call-arg]  # the seed is never implicit
    with pytest.raises(ShapeError) as caught:
        build_stack(2, WIDTH, HIDDEN, seed=0)(np.ones((2, 5)))
    assert str(caught.value) == (
        "BlockStack: the stream's last axis must be the stack width 4: got [2,5]"
    )


def test_a_stack_trains_with_an_optimizer():
    from engine.optim import Adam

    stack = build_stack(2, WIDTH, HIDDEN, "prenorm", seed=1, activation="gelu")
    h, target = sample(8, WIDTH, seed=88), sample(8, WIDTH, seed=89)
    optimizer = Adam(stack.parameters(), lr=0.01)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        diff = stack(h) - TensorValue.constant(target)
        loss = (diff * diff).mean()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.value))
    assert losses[-1] < 0.7 * losses[0]


def test_a_block_takes_a_norm_exactly_where_it_places_one():
    stack = build_stack(1, WIDTH, HIDDEN, "prenorm", seed=0)
    mlp, norm = stack.blocks[0].mlp, stack.blocks[0].mlp_norm
    with pytest.raises(ConfigError, match=r"^Block: every sublayer takes a norm exactly when "):
        Block(mlp, norm_at="pre")
    with pytest.raises(ConfigError, match=r"^Block: every sublayer takes a norm exactly when "):
        Block(mlp, mlp_norm=norm)
    with pytest.raises(ConfigError, match=r"^Block: norm_at must be one of None, pre, post; "):
        Block(mlp, norm_at="middle", mlp_norm=norm)


def test_the_forward_takes_another_merge():
    block = build_stack(1, WIDTH, HIDDEN, "residual", seed=0).blocks[0]
    x = TensorValue.constant(sample(2, WIDTH, seed=5))
    passed = block.forward(x, write_only)
    np.testing.assert_array_equal(passed.output.value, block.mlp(x).value)
    assert passed.middle is x and passed.attention_write is None
    np.testing.assert_array_equal(block(x).value, x.value + block.mlp(x).value)
