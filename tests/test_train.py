"""Tests for engine/models/train.py: a short run learns (validation loss below the unigram
entropy), results are deterministic, the schedule and the settings are checked."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.data import ArithmeticCorpus, CorpusConfig
from engine.errors import ConfigError
from engine.models import DecoderConfig
from engine.models.train import TrainConfig, train


@pytest.fixture(scope="module")
def corpus() -> ArithmeticCorpus:
    return ArithmeticCorpus(CorpusConfig(problems_per_sequence=2))


def short_run(corpus, **model):
    config = DecoderConfig(vocab_size=13, context=corpus.sequence_length, width=16, heads=2,
                           depth=1, **model)
    return train(corpus, config, TrainConfig(steps=60, lr=1e-2, warmup=5, eval_every=30,
                                             eval_sequences=16, curve_points=6))


@pytest.fixture(scope="module")
def run(corpus):
    return short_run(corpus)


def test_a_short_run_beats_the_unigram_entropy(corpus, run):
    refs = corpus.reference_losses
    assert run.final_validation_loss < refs.unigram
    assert run.curve_loss[-1] < run.curve_loss[0]
    assert run.curve_steps == (10, 20, 30, 40, 50, 60) and run.eval_steps == (30, 60)
    assert run.final_validation_loss > refs.generator  # nobody beats the generator's entropy
    assert run.parameter_count == run.model.parameter_count()


def test_same_seeds_same_bits(corpus, run):
    again = short_run(corpus)
    assert again == run  # every curve and loss, exactly (the model is not compared)
    for name, value in run.model.snapshot().items():
        assert np.array_equal(value, again.model.snapshot()[name])


def test_learning_rate_warms_up_then_decays_to_the_floor():
    config = TrainConfig(steps=100, lr=1.0, warmup=10, min_lr_ratio=0.1)
    assert config.learning_rate(0) == pytest.approx(0.1)
    assert config.learning_rate(9) == pytest.approx(1.0)
    assert config.learning_rate(10) == pytest.approx(1.0)
    assert config.learning_rate(99) == pytest.approx(0.1, abs=1e-3)
    rates = [config.learning_rate(s) for s in range(10, 100)]
    assert all(a >= b for a, b in itertools.pairwise(rates))


@pytest.mark.parametrize("bad", [dict(steps=0), dict(lr=0.0), dict(clip_norm=-1.0),
                                 dict(warmup=-1), dict(min_lr_ratio=1.5), dict(seed=True)])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ConfigError):
        TrainConfig(**bad)


def test_a_model_that_does_not_fit_the_corpus_is_refused(corpus):
    with pytest.raises(ConfigError, match="must fit the corpus"):
        train(corpus, DecoderConfig(vocab_size=13, context=8), TrainConfig(steps=1))
