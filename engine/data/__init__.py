"""Synthetic data for the decoder lab: a character tokenizer and the arithmetic corpus
(engine/data/arithmetic.py documents the corpus and its reference losses)."""

from engine.data.arithmetic import ALPHABET, ArithmeticCorpus, CorpusConfig, ReferenceLosses
from engine.data.tokenizer import CharTokenizer

__all__ = ["ALPHABET", "ArithmeticCorpus", "CharTokenizer", "CorpusConfig", "ReferenceLosses"]
