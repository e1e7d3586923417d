"""The Boolean-QA scorer: texts in, P(Yes)/(P(Yes)+P(No)) out.

UniEval (Zhong et al., 2022, seed 000) scores a text by asking a T5 model a yes/no question and taking
``P(Yes) / (P(Yes) + P(No))`` from the first decoder step; that equals ``sigmoid(logit_Yes - logit_No)``,
which is what every exported graph outputs as ``p_yes`` (UniEval's public code, maszhongming/UniEval).

Example::

    scorer = load_boolqa("models/unieval-sum", device="cpu")
    result = scorer.score(["question: Is this a fluent paragraph? </s> paragraph: The cat sat on the mat."])
    result.scores[0]      # 0.93...
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from nlgeval_runtime.errors import ModelFormatError, ScoringError
from nlgeval_runtime.fingerprint import fingerprint_id, fingerprint_of, planned_fingerprint  # noqa: F401 (re-exported)
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.session import Session, check_options, create_session, verify_for
from nlgeval_runtime.tokenize import TextEncoder, pad, plan_batches


@dataclass
class BoolQAResult:
    scores: np.ndarray  # float64, input order
    truncated: np.ndarray  # bool: cut to the model's max length (tail first)
    n_tokens: np.ndarray  # int64: tokens before truncation


class BoolQAScorer:
    """Scores Boolean-QA input texts with one exported model folder on one ONNX Runtime session."""

    def __init__(
        self,
        folder: ModelFolder,
        session: Session,
        *,
        model_ref: str | None = None,
        batch_tokens: int = 16384,
        max_batch_size: int = 64,
    ):
        if folder.kind != "boolqa":
            raise ModelFormatError(f"{str(folder.path)!r} holds a {folder.kind!r} model, not a Boolean-QA evaluator")
        conventions = folder.input_conventions
        self.folder = folder
        self.session = session
        self.model_ref = model_ref or str(folder.path)
        self.batch_tokens = int(batch_tokens)
        self.max_batch_size = int(max_batch_size)
        self.encoder = TextEncoder(
            folder.tokenizer_path,
            separator=conventions["separator"],
            separator_token=conventions["separator_token"],
            max_length=conventions["max_length"],
        )
        self.pad_id = int(conventions["pad_token_id"])
        names = session.input_names
        if names[:2] != ["input_ids", "attention_mask"]:
            raise ModelFormatError(f"{session.graph} takes inputs {names}, expected ['input_ids', 'attention_mask']")
        # Dynamic quantisation computes activation scales over the whole input tensor of a run, so an input's
        # score would depend on which other inputs share its batch (and on their padding). Such graphs are run
        # one input at a time; weight-only quantised graphs compute in float and batch freely.
        self.batch_invariant = folder.batch_invariant(session.precision)
        if not self.batch_invariant:
            self.max_batch_size = 1
        self.fingerprint = fingerprint_of(folder, self.model_ref, session.provider, session.precision)
        self.fingerprint_id = fingerprint_id(self.fingerprint)

    provider = property(lambda self: self.session.provider)
    precision = property(lambda self: self.session.precision)
    max_length = property(lambda self: self.encoder.max_length)
    separator = property(lambda self: self.encoder.separator)

    def score(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> BoolQAResult:
        """Score ``texts``; results come back in input order.

        ``progress(done, total)`` is called after every batch when given.
        """
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
        scores = np.empty(len(texts), dtype=np.float64)
        if not texts:
            return BoolQAResult(scores, np.zeros(0, bool), np.zeros(0, np.int64))
        encoded = self.encoder.encode(texts)
        lengths = np.array([r.size for r in encoded.ids], dtype=np.int64)
        done = 0
        for batch in plan_batches(lengths, batch_tokens=self.batch_tokens, max_batch_size=self.max_batch_size):
            ids, mask = pad([encoded.ids[i] for i in batch], self.pad_id)
            (p_yes,) = self.session.run({"input_ids": ids, "attention_mask": mask})[:1]
            scores[batch] = np.asarray(p_yes, dtype=np.float64).reshape(-1)
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        bad = ~np.isfinite(scores)
        if bad.any():
            raise ScoringError(
                f"{int(bad.sum())} of {len(texts)} scores are not finite (precision {self.precision}); "
                "an fp16 graph of a t5-v1_1 model overflows: use precision 'fp32'"
            )
        return BoolQAResult(scores, encoded.truncated, encoded.n_tokens)


def load_boolqa(
    model: str | os.PathLike | None = None,
    *,
    device: str = "auto",
    precision: str = "auto",
    threads: int | None = None,
    batch_tokens: int = 16384,
    max_batch_size: int = 64,
    cache_dir: str | os.PathLike | None = None,
    verify: bool = True,
) -> BoolQAScorer:
    """Resolve ``model`` (folder, Hugging Face id, or None for the embedded default) and build a scorer.

    File hashes are verified before the session is created.
    """
    from nlgeval_runtime.resolve import resolve_model

    check_options(device, precision)
    path = resolve_model(model, cache_dir=cache_dir)
    folder = ModelFolder.open(path)
    if verify:
        # Verify before the session reads the graph, so a tampered file is reported as such.
        verify_for(folder, device, precision)
    session = create_session(folder, device=device, precision=precision, threads=threads)
    ref = str(model) if model is not None else "default"
    return BoolQAScorer(folder, session, model_ref=ref, batch_tokens=batch_tokens, max_batch_size=max_batch_size)
