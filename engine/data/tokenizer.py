"""Character-level tokenizer: one token per character of a fixed alphabet.

Contract: `CharTokenizer(alphabet)` numbers the alphabet's characters ``0 .. V-1`` in the order
given (each character once). `encode` maps a string to an ``int64`` array and raises
`ConfigError` naming the first character outside the alphabet; `decode` is its inverse and
refuses ids outside ``[0, V)``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from engine.errors import ConfigError


class CharTokenizer:
    """Token ids for the characters of ``alphabet``, in its order."""

    def __init__(self, alphabet: str) -> None:
        if not alphabet or len(set(alphabet)) != len(alphabet):
            raise ConfigError(
                f"CharTokenizer: alphabet must be distinct characters, got {alphabet!r}")
        self.alphabet = alphabet
        self._ids = {character: index for index, character in enumerate(alphabet)}

    @property
    def vocab_size(self) -> int:
        return len(self.alphabet)

    def id(self, character: str) -> int:
        """The token id of one character."""
        return int(self.encode(character)[0])

    def encode(self, text: str) -> np.ndarray:
        """The ids of ``text``'s characters, as a 1-D ``int64`` array."""
        try:
            return np.array([self._ids[c] for c in text], dtype=np.int64)
        except KeyError as error:
            raise ConfigError(
                f"CharTokenizer: character {error.args[0]!r} is not in the alphabet "
                f"{self.alphabet!r}"
            ) from None

    def decode(self, ids: Iterable[int]) -> str:
        """The characters of ``ids`` (any integer iterable or array), joined."""
        flat = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids).ravel()
        if flat.size and (flat.dtype.kind not in "iu" or flat.min() < 0
                          or flat.max() >= self.vocab_size):
            raise ConfigError(f"CharTokenizer: ids must be integers in [0, {self.vocab_size})")
        return "".join(self.alphabet[int(i)] for i in flat)
