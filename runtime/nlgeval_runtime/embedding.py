"""Sentence embeddings: texts in, unit vectors out, from a model folder of kind ``embedding``.

The rag relevances ask whether an answer addresses its question and whether a passage bears on it. A
Boolean-QA head trained on summaries does not know that; a sentence encoder trained on question-answer and
question-passage pairs does (all-MiniLM-L6-v2 was trained with such pairs among its data; Reimers and
Gurevych, 2019, and the model's card). Its cosine similarity, calibrated, is the relevance score (Ragas'
answer relevancy compares embeddings the same way, Es et al., 2023).

An embedding folder's graph maps ``(input_ids, attention_mask)`` to ``embedding`` (batch x dim, mean-pooled
over the tokens and L2-normalised in the graph); ``nlgeval.json`` has ``kind: "embedding"`` and ``input``
with ``max_length`` and ``pad_token_id``. Texts longer than ``max_length`` tokens are cut at the tail.

    >>> embedder = load_embedder("runtime/nlgeval_runtime/embedded/embed")       # doctest: +SKIP
    >>> vectors = embedder.embed(["Can I return a kettle?", "Kettles can be returned within 30 days."])
    >>> float(vectors[0] @ vectors[1])                                            # doctest: +SKIP
    0.71
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from nlgeval_runtime.errors import ModelFormatError
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.session import Session, check_options, create_session, verify_for

__all__ = ["OUTPUT", "SentenceEmbedder", "load_embedder"]

#: the graph's output: one unit vector per input
OUTPUT = "embedding"


class SentenceEmbedder:
    """Embeds texts with one embedding folder on one ONNX Runtime session (batched by length)."""

    def __init__(self, folder: ModelFolder, session: Session, *, model_ref: str | None = None, max_batch: int = 32):
        from tokenizers import Tokenizer

        from nlgeval_runtime.fingerprint import fingerprint_id, fingerprint_of

        if folder.kind != "embedding":
            raise ModelFormatError(f"{str(folder.path)!r} holds a {folder.kind!r} model, not a sentence encoder")
        conventions = folder.input_conventions
        for key in ("max_length", "pad_token_id"):
            if not isinstance(conventions.get(key), int):
                raise ModelFormatError(f"{str(folder.path)!r}: nlgeval.json 'input.{key}' must be an integer")
        self.folder = folder
        self.session = session
        self.model_ref = model_ref or str(folder.path)
        self.max_length = int(conventions["max_length"])
        self.pad_id = int(conventions["pad_token_id"])
        self.max_batch = int(max_batch)
        try:
            self.tokenizer = Tokenizer.from_file(str(folder.tokenizer_path))
        except Exception as exc:  # the tokenizers library raises plain Exceptions on bad files
            raise ModelFormatError(f"cannot read tokenizer {str(folder.tokenizer_path)!r}: {exc}") from exc
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        names = session.input_names
        if names[:2] != ["input_ids", "attention_mask"]:
            raise ModelFormatError(f"{session.graph} takes inputs {names}, expected ['input_ids', 'attention_mask']")
        outputs = [o.name for o in session.inner.get_outputs()]
        if OUTPUT not in outputs:
            raise ModelFormatError(f"{session.graph} has outputs {outputs}; an embedding graph outputs {OUTPUT!r}")
        self._extra = {name: None for name in names[2:]}  # token_type_ids, where the graph takes them
        self.fingerprint = fingerprint_of(folder, self.model_ref, session.provider, session.precision)
        self.fingerprint_id = fingerprint_id(self.fingerprint)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (float32, one row per text, input order)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda k: len(encodings[k].ids))
        rows: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(order), self.max_batch):
            chunk = order[start : start + self.max_batch]
            width = max(len(encodings[k].ids) for k in chunk)
            ids = np.full((len(chunk), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for r, k in enumerate(chunk):
                n = len(encodings[k].ids)
                ids[r, :n] = encodings[k].ids
                mask[r, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            for name in self._extra:
                feeds[name] = np.zeros_like(ids)
            (vectors,) = self.session.inner.run([OUTPUT], feeds)
            for r, k in enumerate(chunk):
                rows[k] = np.asarray(vectors[r], dtype=np.float32)
        return np.stack(rows)  # type: ignore[arg-type]


def load_embedder(
    model: str | os.PathLike,
    *,
    device: str = "auto",
    precision: str = "auto",
    threads: int | None = None,
    verify: bool = True,
) -> SentenceEmbedder:
    """Load an embedding folder (file hashes verified before the session is created)."""
    check_options(device, precision)
    from pathlib import Path

    folder = ModelFolder.open(Path(model))
    if folder.kind != "embedding":
        raise ModelFormatError(
            f"{str(folder.path)!r} is a {folder.kind!r} model folder, not a sentence encoder (kind 'embedding'); "
            "export one with nlgeval_training.export_embedding.export_sentence_encoder"
        )
    if verify:
        verify_for(folder, device, precision)
    session = create_session(folder, device=device, precision=precision, threads=threads)
    return SentenceEmbedder(folder, session, model_ref=str(model))
