"""Tokenisation shared by the metrics that count words themselves (diversity, length, edit rate)."""

from __future__ import annotations

import re

_WORD_PUNCT = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)

#: name used in signatures for :func:`tokens`
TOKENIZATION = "lower-word-punct"


def tokens(text: str, lowercase: bool = True) -> list[str]:
    """Words and punctuation marks (``"Don't stop!"`` -> ``["don't", "stop", "!"]``)."""
    return _WORD_PUNCT.findall(text.lower() if lowercase else text)


def words(text: str) -> list[str]:
    """Words only, punctuation dropped (what length and readability formulas count)."""
    return _WORD.findall(text)


def ngrams(toks: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)]
