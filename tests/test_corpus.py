"""Tests for engine/data: the arithmetic corpus's text, split, batching, determinism and
reference losses, and the character tokenizer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.data import ALPHABET, ArithmeticCorpus, CharTokenizer, CorpusConfig
from engine.errors import ConfigError


@pytest.fixture(scope="module")
def corpus() -> ArithmeticCorpus:
    return ArithmeticCorpus()


def test_problems_are_zero_padded_sums(corpus):
    assert corpus.text(7, 45) == "07+45=052;"
    assert corpus.text(99, 99) == "99+99=198;"
    assert corpus.tokenizer.decode(corpus.problem_tokens(np.array([745]))[0]) == "07+45=052;"
    assert corpus.problem_length == 10 and corpus.sequence_length == 30


def test_the_split_is_disjoint_and_covers_every_problem(corpus):
    train, validation = corpus.operands("train"), corpus.operands("validation")
    assert len(train) == 9000 and len(validation) == 1000
    as_set = {tuple(p) for p in train} | {tuple(p) for p in validation}
    assert len(as_set) == 10_000


def test_sequences_start_with_the_separator_and_targets_are_the_next_characters(corpus):
    inputs, targets = corpus.batch("train", 4, np.random.default_rng(1))
    assert inputs.shape == targets.shape == (4, 30) and inputs.dtype == np.int64
    for row_in, row_out in zip(inputs, targets, strict=True):
        text = corpus.tokenizer.decode(row_in) + corpus.tokenizer.decode(row_out[-1:])
        assert text[0] == ";" and corpus.tokenizer.decode(row_out) == text[1:]
        for problem in text[1:].split(";")[:-1]:
            left, total = problem.split("=")
            a, b = left.split("+")
            assert int(a) + int(b) == int(total)
            assert (int(a), int(b)) in {tuple(p) for p in corpus.operands("train")}


def test_batches_depend_only_on_the_generator(corpus):
    first = corpus.batch("validation", 8, np.random.default_rng(5))
    again = ArithmeticCorpus().batch("validation", 8, np.random.default_rng(5))
    other = corpus.batch("validation", 8, np.random.default_rng(6))
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))
    assert not np.array_equal(first[0], other[0])
    with pytest.raises(ConfigError, match="Generator"):
        corpus.batch("train", 2, 5)


def test_another_seed_gives_another_split():
    a = ArithmeticCorpus(CorpusConfig(seed=0)).operands("validation")
    b = ArithmeticCorpus(CorpusConfig(seed=1)).operands("validation")
    assert not np.array_equal(a, b)


def test_fixed_sequences_hold_every_validation_problem(corpus):
    inputs, targets = corpus.fixed_sequences("validation")
    assert inputs.shape == (334, 30)
    problems = {corpus.tokenizer.decode(row)[i:i + 10] for row in targets for i in (0, 10, 20)}
    assert len(problems) == 1000
    small = corpus.fixed_sequences("train", 5)
    assert small[0].shape == (5, 30)


def test_reference_losses_are_exact(corpus):
    refs = corpus.reference_losses
    assert refs.generator == pytest.approx(0.4 * math.log(10), abs=1e-15)
    assert refs.training_sampler == pytest.approx(math.log(9000) / 10, abs=1e-15)
    # Unigram: counted by hand from the training problems' characters.
    text = "".join(corpus.text(int(a), int(b)) for a, b in corpus.operands("train"))
    counts = np.array([text.count(c) for c in ALPHABET], dtype=float)
    p = counts / counts.sum()
    assert refs.unigram == pytest.approx(float(-np.sum(p * np.log(p))), abs=1e-12)
    # Format only: operand digits cost ln 10 each, sum digits their marginal entropy.
    sums = np.add.outer(np.arange(100), np.arange(100)).ravel()
    entropy = 0.0
    for place in (100, 10, 1):
        q = np.bincount(sums // place % 10, minlength=10) / sums.size
        q = q[q > 0]
        entropy += float(-np.sum(q * np.log(q)))
    assert refs.format_only == pytest.approx((4 * math.log(10) + entropy) / 10, abs=1e-12)
    assert refs.training_sampler < refs.generator < refs.format_only < refs.unigram
    assert corpus.position_entropy().sum() == pytest.approx(4 * math.log(10))


def test_one_digit_corpus_reference():
    small = ArithmeticCorpus(CorpusConfig(digits=1, problems_per_sequence=2))
    assert small.text(3, 9) == "3+9=12;" and small.sequence_length == 14
    assert small.reference_losses.generator == pytest.approx(2 * math.log(10) / 7)


@pytest.mark.parametrize("bad", [dict(digits=0), dict(digits=4), dict(validation_fraction=1.0),
                                 dict(problems_per_sequence=True), dict(seed=-1)])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ConfigError):
        CorpusConfig(**bad)


def test_tokenizer_round_trip_and_refusals():
    tokenizer = CharTokenizer(ALPHABET)
    ids = tokenizer.encode("12+3=15;")
    assert tokenizer.decode(ids) == "12+3=15;" and tokenizer.vocab_size == 13
    with pytest.raises(ConfigError, match="'x' is not in the alphabet"):
        tokenizer.encode("1x")
    with pytest.raises(ConfigError, match="ids must be integers"):
        tokenizer.decode([13])
    with pytest.raises(ConfigError, match="distinct"):
        CharTokenizer("aa")
