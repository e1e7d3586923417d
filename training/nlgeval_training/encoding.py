"""Tokenisation of Boolean-QA inputs for training, identical to what the runtime does when scoring.

The literal separator ``</s>`` becomes the model's separator token, the tokenizer's post-processor adds
its special tokens, and inputs longer than ``max_length`` lose their tail (the document or fact).

    >>> tok = load_tokenizer(minilm_path() / "tokenizer.json", max_length=256)      # doctest: +SKIP
    >>> encode(tok, ["question: Is this a fluent paragraph? </s> paragraph: Hi."], "[SEP]")   # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path


def load_tokenizer(path: str | Path, max_length: int):
    """A ``tokenizers.Tokenizer`` with padding off and tail truncation at ``max_length``."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_length=max_length, direction="right")
    return tok


def encode(tokenizer, texts: list[str], separator_token: str, separator: str = "</s>") -> list[list[int]]:
    """Token ids of ``texts`` after mapping ``separator`` to ``separator_token``."""
    mapped = [t.replace(separator, separator_token) for t in texts]
    return [e.ids for e in tokenizer.encode_batch(mapped)]
