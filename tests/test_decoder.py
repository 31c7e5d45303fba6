"""Tests for engine/models: the decoder's shapes and names, causality, the plain variant's
missing skip, the residual stream's exact decomposition, gradients by central differences,
initialization variants and determinism."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import ConfigError, IndicesError, ShapeError
from engine.gradcheck import gradcheck
from engine.models import Decoder, DecoderConfig
from engine.nn import residual_add


def tiny(**settings) -> DecoderConfig:
    base = dict(vocab_size=13, context=8, width=8, depth=2, heads=2, seed=3)
    return DecoderConfig(**{**base, **settings})


def tokens(batch=2, length=7, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 13, size=(batch, length))


def test_shapes_and_parameter_names():
    model = Decoder(tiny(depth=3))
    run = model.forward(tokens())
    assert run.logits.shape == (2, 7, 13)
    assert len(run.streams) == 4 and len(run.middles) == 3
    assert all(s.shape == (2, 7, 8) for s in (*run.streams, *run.attention_writes,
                                              *run.mlp_writes))
    assert all(p.shape == (2, 2, 7, 7) for p in run.attention_patterns)
    names = list(model.named_parameters())
    assert names[:8] == ["embed.token", "embed.position", "block0.attn.norm.weight",
                         "block0.attn.wq", "block0.attn.wk", "block0.attn.wv",
                         "block0.attn.wo", "block0.mlp.norm.weight"]
    assert names[-3:] == ["block2.mlp.w2", "final_norm.weight", "unembed"]
    per_block = 8 + 4 * 64 + 8 + 2 * 8 * 32
    assert model.parameter_count() == 13 * 8 + 8 * 8 + 3 * per_block + 8 + 8 * 13
    tied = Decoder(tiny(tied=True))
    assert "unembed" not in tied.named_parameters()
    assert tied(tokens()).shape == (2, 7, 13)


@pytest.mark.parametrize("settings", [dict(), dict(norm="post"), dict(variant="plain")])
def test_a_future_token_never_changes_earlier_logits(settings):
    model = Decoder(tiny(**settings))
    before = tokens(batch=1)
    after = before.copy()
    after[0, 4] = (after[0, 4] + 5) % 13
    first, second = model(before).value, model(after).value
    assert np.array_equal(first[:, :4], second[:, :4])
    assert not np.allclose(first[:, 4:], second[:, 4:])
    patterns = model.forward(before).attention_patterns
    for pattern in patterns:
        assert np.all(np.triu(pattern.value[0, 0], k=1) == 0)


def test_the_plain_variant_has_no_skip():
    run = Decoder(tiny(variant="plain")).forward(tokens())
    for k in range(2):
        assert np.array_equal(run.middles[k].value, run.attention_writes[k].value)
        assert np.array_equal(run.streams[k + 1].value, run.mlp_writes[k].value)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_a_block_merges_each_write_with_the_merge_it_is_given(norm):
    model = Decoder(tiny(norm=norm))
    x, block = model.embed(tokens()), model.blocks[0]
    merged = []

    def merge(stream, write):
        merged.append((stream, write))
        return residual_add(stream, write)

    bent, plain = block.forward(x, merge), block.forward(x)
    (first_stream, first_write), (second_stream, second_write) = merged
    assert first_stream is x and first_write is bent.attention_write
    assert second_stream is bent.middle and second_write is bent.mlp_write
    assert np.array_equal(bent.output.value, plain.output.value)  # residual_add is the default
    halved = block.forward(x, lambda stream, write: residual_add(stream, write.scale(0.5)))
    assert not np.array_equal(halved.output.value, plain.output.value)


def test_residual_pre_norm_stream_is_the_embedding_plus_every_write():
    run = Decoder(tiny(depth=4)).forward(tokens())
    total = run.streams[0].value.copy()
    for attention, mlp in zip(run.attention_writes, run.mlp_writes, strict=True):
        total = total + attention.value + mlp.value
    np.testing.assert_allclose(run.streams[-1].value, total, rtol=0, atol=1e-12)
    for k in range(4):
        np.testing.assert_array_equal(
            run.streams[k + 1].value, run.middles[k].value + run.mlp_writes[k].value)


def test_post_norm_normalizes_the_stream():
    run = Decoder(tiny(norm="post")).forward(tokens())
    for state in run.streams[1:]:
        rms = np.sqrt(np.mean(state.value**2, axis=-1))
        np.testing.assert_allclose(rms, 1.0, rtol=1e-4)  # weight 1 at initialization


@pytest.mark.parametrize("settings", [dict(), dict(norm="post", variant="plain", tied=True),
                                      dict(output_init="scaled", norm="post")])
def test_loss_gradients_match_central_differences(settings):
    model = Decoder(tiny(**settings))
    inputs, targets = tokens(seed=1), tokens(seed=2)
    loss = model.loss(inputs, targets)
    loss.backward()
    named = model.named_parameters()
    for name in ("embed.token", "embed.position", "block0.attn.wq", "block0.attn.wk",
                 "block1.attn.wo", "block0.mlp.w1", "block1.mlp.w2", "block1.mlp.norm.weight",
                 "final_norm.weight"):
        parameter = named[name]
        original = parameter.value

        def objective(probe, parameter=parameter):
            parameter.set_value(probe)
            return float(model.loss(inputs, targets).value)

        result = gradcheck(original, parameter.gradient(), 1e-6, 1e-6, 6, objective)
        parameter.set_value(original)
        result.raise_if_failed()


def test_output_init_variants():
    zero = Decoder(tiny(output_init="zero"))
    run = zero.forward(tokens())
    for state in run.streams:
        assert np.array_equal(state.value, run.streams[0].value)  # every block starts as identity
    default = Decoder(tiny(depth=4)).named_parameters()["block0.attn.wo"].value
    scaled = Decoder(tiny(depth=4, output_init="scaled")).named_parameters()["block0.attn.wo"].value
    np.testing.assert_allclose(scaled, default / np.sqrt(8), rtol=1e-12)
    wq = [Decoder(tiny(output_init=o)).named_parameters()["block0.attn.wq"].value
          for o in ("default", "zero")]
    assert np.array_equal(*wq)  # one matrix's draw does not depend on another's init


def test_same_seed_same_bits_other_seed_other_weights():
    first, second = Decoder(tiny()), Decoder(tiny())
    assert np.array_equal(first(tokens()).value, second(tokens()).value)
    other = Decoder(tiny(seed=4))
    assert not np.array_equal(first(tokens()).value, other(tokens()).value)


@pytest.mark.parametrize("settings", [dict(), dict(variant="plain", norm="post")])
def test_a_float32_decoder_is_float32_end_to_end_and_near_its_float64_twin(settings):
    single, double = Decoder(tiny(precision="float32", **settings)), Decoder(tiny(**settings))
    loss = single.loss(tokens()[:, :-1], tokens()[:, 1:])
    loss.backward()
    assert loss.value.dtype == np.float32
    assert {p.value.dtype for p in single.parameters()} == {np.dtype(np.float32)}
    assert {p.gradient().dtype for p in single.parameters()} == {np.dtype(np.float32)}
    reference = double.loss(tokens()[:, :-1], tokens()[:, 1:]).value
    np.testing.assert_allclose(loss.value, reference, rtol=1e-5)


def test_readout_and_snapshot_load():
    model = Decoder(tiny())
    run = model.forward(tokens())
    assert np.array_equal(model.readout(run.streams[-1]).value, run.logits.value)
    copy = Decoder(tiny(seed=9))
    copy.load(model.snapshot())
    assert np.array_equal(copy(tokens()).value, run.logits.value)
    with pytest.raises(ConfigError):
        copy.load({"embed.token": np.zeros((13, 8))})


@pytest.mark.parametrize("bad", [dict(width=10, heads=4), dict(variant="skip"),
                                 dict(norm="middle"), dict(output_init="tiny"), dict(depth=0),
                                 dict(tied=1), dict(seed=-1), dict(precision="float16")])
def test_bad_configs_are_refused(bad):
    with pytest.raises(ConfigError):
        tiny(**bad)


def test_bad_tokens_are_refused():
    model = Decoder(tiny())
    with pytest.raises(ShapeError):
        model(np.zeros((2, 9), dtype=int))  # longer than the context
    with pytest.raises(IndicesError):
        model(np.full((1, 3), 13))
