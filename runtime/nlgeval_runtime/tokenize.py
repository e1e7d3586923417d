"""Tokenisation with the ``tokenizers`` library, following the model folder's input conventions.

UniEval inputs contain a literal ``</s>`` between fields (UniEval's public code, maszhongming/UniEval). For a T5
tokenizer ``</s>`` is a registered special token, so the ``tokenizers`` library already maps the literal to EOS;
models with another separator (``[SEP]`` for BERT-like encoders) declare it in ``input.separator_token``
and the literal is replaced before encoding. The tokenizer's post-processor appends the end token(s).

Truncation keeps the head of the text and cuts the tail (the document / fact comes last), keeping the
trailing special tokens, and reports which inputs were cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nlgeval_runtime.errors import ModelFormatError


@dataclass
class Encoded:
    ids: list[np.ndarray]  # one int64 array per input, truncated, special tokens included
    n_tokens: np.ndarray  # length before truncation
    truncated: np.ndarray  # bool


class TextEncoder:
    """Encodes Boolean-QA input texts into token ids for one model folder.

    Example::

        enc = TextEncoder("model/tokenizer.json", separator="</s>", separator_token="</s>", max_length=1024)
        batch = enc.encode(["question: Is this a fluent paragraph? </s> paragraph: Hi."])
    """

    def __init__(self, tokenizer_path: str | Path, *, separator: str, separator_token: str, max_length: int):
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # the tokenizers library raises plain Exceptions on bad files
            raise ModelFormatError(f"cannot read tokenizer {str(tokenizer_path)!r}: {exc}") from exc
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.separator = separator
        self.separator_token = separator_token
        self.max_length = int(max_length)
        self._memo: dict[str, tuple[np.ndarray, int, bool]] = {}
        if self.tokenizer.token_to_id(separator_token) is None:
            raise ModelFormatError(
                f"separator token {separator_token!r} of the model folder is not in {str(tokenizer_path)!r}"
            )
        probe = self.tokenizer.encode(f"a {separator} b")
        if self.tokenizer.token_to_id(separator_token) not in probe.ids and separator == separator_token:
            raise ModelFormatError(
                f"the tokenizer does not map the literal {separator!r} to its special token; "
                "it must be registered as a special (added) token in tokenizer.json"
            )

    #: encodings kept in memory (oldest dropped first)
    MEMO_SIZE = 4096

    def prepare(self, text: str) -> str:
        if self.separator != self.separator_token:
            return text.replace(self.separator, self.separator_token)
        return text

    def encode(self, texts: list[str]) -> Encoded:
        """Token ids of ``texts`` (truncated), their lengths before truncation, and which were cut.

        Recently encoded texts are answered from memory: an evaluator counts the tokens of an input (to
        decide on source windows) just before it scores it, and both ask for the same encoding.
        """
        rows: list = [self._memo.get(t) for t in texts]
        missing = list(dict.fromkeys(t for t, row in zip(texts, rows) if row is None))
        if missing:
            encodings = self.tokenizer.encode_batch([self.prepare(t) for t in missing])
            fresh = {t: self._truncate(enc) for t, enc in zip(missing, encodings)}
            rows = [fresh[t] if row is None else row for t, row in zip(texts, rows)]
            for text, row in fresh.items():
                self._memo[text] = row
            while len(self._memo) > self.MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
        ids = [row[0] for row in rows]
        lengths = np.array([row[1] for row in rows], dtype=np.int64)
        cut = np.array([row[2] for row in rows], dtype=bool)
        return Encoded(ids, lengths, cut)

    def _truncate(self, enc) -> tuple[np.ndarray, int, bool]:
        row = np.asarray(enc.ids, dtype=np.int64)
        n_tokens, cut = row.size, False
        if row.size > self.max_length:
            # Keep the trailing special tokens (EOS / [SEP]) the post-processor added.
            mask = enc.special_tokens_mask
            tail = 0
            while tail < len(mask) and mask[len(mask) - 1 - tail] == 1:
                tail += 1
            head = self.max_length - tail
            row = np.concatenate([row[:head], row[row.size - tail :]]) if tail else row[: self.max_length]
            cut = True
        row.setflags(write=False)  # shared between calls through the memo
        return row, n_tokens, cut


# What one more session call costs, counted in padded tokens: a call's fixed work (per-call setup, small
# matrix products that use the cores poorly) is worth about this many tokens of a t5-v1_1 forward on a CPU.
CALL_TOKENS = 256


def plan_batches(
    lengths: np.ndarray, *, batch_tokens: int, max_batch_size: int, call_tokens: int = CALL_TOKENS
) -> list[np.ndarray]:
    """Group input indices into batches of similar length under a padded-token budget.

    Inputs are sorted by length (longest first, so a budget problem shows on the first batch) and cut
    into consecutive batches with ``len(batch) * longest_in_batch <= batch_tokens`` and
    ``len(batch) <= max_batch_size``. Among those cuts the one with the least work is chosen (dynamic
    programming): the padded tokens computed plus ``call_tokens`` per batch, so a short input is not padded
    to a long one's length while inputs of about the same length still share a call. An input longer
    than the budget forms a batch of its own.
    """
    if batch_tokens < 1 or max_batch_size < 1:
        raise ValueError("batch_tokens and max_batch_size must be >= 1")
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    longest = np.maximum(lengths[order], 1)  # descending: a batch starting at j has longest[j]
    n = len(order)
    cost = np.zeros(n + 1, dtype=np.float64)  # cost[i]: least work for the first i inputs
    cut = np.zeros(n + 1, dtype=np.int64)  # the batch ending before i starts at cut[i]
    for i in range(1, n + 1):
        starts = np.arange(max(0, i - max_batch_size), i)
        sizes = i - starts
        fits = (sizes * longest[starts] <= batch_tokens) | (sizes == 1)
        work = cost[starts] + sizes * longest[starts] + call_tokens
        work[~fits] = np.inf
        best = int(np.argmin(work))  # the earliest start among equals: the largest batch
        cost[i], cut[i] = work[best], starts[best]
    batches: list[np.ndarray] = []
    end = n
    while end > 0:
        batches.append(order[cut[end] : end])
        end = int(cut[end])
    return batches[::-1]


def pad(rows: list[np.ndarray], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    width = max(r.size for r in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : r.size] = r
        mask[i, : r.size] = 1
    return ids, mask
