"""Experiment 0, the corpus's facts, and what every experiment of the lab shares: its trace's
name and its one arithmetic corpus.

Contract: `corpus_facts` reads the arithmetic corpus (engine/data) and its reference losses;
`lab_corpus()` is the corpus every experiment of the lab trains and measures on, built once
per process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from engine.data import ArithmeticCorpus
from engine.experiments.registry import Experiment, register

#: The trace the lab's experiments write into (`engine.experiments.registry`).
TRACE = "residual-stream"


@functools.cache
def lab_corpus() -> ArithmeticCorpus:
    """The lab's corpus (its default configuration), built once."""
    return ArithmeticCorpus()


@dataclass(frozen=True)
class CorpusFacts:
    vocab: int
    digits: int
    problem_length: int
    problems_per_sequence: int
    sequence_length: int
    train_problems: int
    validation_problems: int
    unigram: float
    format_only: float
    generator: float
    training_sampler: float


def corpus_facts(corpus: ArithmeticCorpus) -> CorpusFacts:
    """The corpus's sizes and reference losses (nats per token)."""
    ref = corpus.reference_losses
    return CorpusFacts(corpus.tokenizer.vocab_size, corpus.config.digits,
                       corpus.problem_length, corpus.config.problems_per_sequence,
                       corpus.sequence_length, corpus.size("train"), corpus.size("validation"),
                       ref.unigram, ref.format_only, ref.generator, ref.training_sampler)


register(Experiment(TRACE, "corpus", None, lambda seed, config: corpus_facts(lab_corpus())))
