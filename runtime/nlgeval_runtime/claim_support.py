"""External fact checkers served from a model folder (``kind: "claim-support"``), read as their authors read them.

A claim-support folder holds one graph ``(input_ids, attention_mask) -> p_supported`` and, in its manifest's
``reading``, how its authors turn a (document, claim) pair into that graph's inputs and a score:

- ``template``: the text the tokenizer reads, with ``{document}`` (a chunk of the document) and ``{claim}``;
- ``chunk``: ``{"size": n, "count": "tokens" | "words"}`` splits a long document into chunks of whole sentences
  of about ``n`` tokens (or words), the score being the max over chunks; ``null`` reads the document whole;
- ``max_length``: the tokens the model reads (the input's tail is cut past it, as the authors' tokenizer call
  does); ``max_tokens``: the longest input read at all (past it the checker refuses, naming the limit);
- ``supported_from``: the score from which the authors call a claim supported (their threshold).

The readings ``nlgeval export`` writes (``nlgeval_training.checkers``):

- MiniCheck (Tang, Laban, Durrett, "MiniCheck: Efficient Fact-Checking of LLMs on Grounding Documents", EMNLP 2024;
  github.com/Liyan06/MiniCheck, ``minicheck/inference.py``): the document is split into sentences per line, the
  sentences gathered into chunks of about 400 tokens (RoBERTa-large, DeBERTa-v3-large) or 500 words
  (Flan-T5-large), each chunk read with the claim as ``chunk + eos_token + claim`` (Flan-T5: prefixed
  ``predict: ``), and the claim's support is the max over chunks of softmax(logits)[1] (Flan-T5: the softmax over
  the first decoder step's logits of tokens 3 and 209, index 1); supported from 0.5.
- HHEM-2.1-Open (Vectara, huggingface.co/vectara/hallucination_evaluation_model, ``modeling_hhem_v2.py``): the
  premise is read whole in the prompt ``<pad> Determine if the hypothesis is true given the premise?\\n\\nPremise:
  {document}\\n\\nHypothesis: {claim}`` by a T5 encoder with a token-classification head; the score is the softmax
  of the first token's logits, index 1 (consistent); supported from 0.5.

MiniCheck splits sentences with NLTK's Punkt (``nltk.tokenize.sent_tokenize``, English): this runtime does the
same wherever NLTK and its Punkt data are installed (``pip install nltk``, ``python -m nltk.downloader
punkt_tab``; the ``metrics`` extra of pytest-nlgeval brings NLTK). Without them a chunked reading splits with
:func:`nlgeval_runtime.sentences.split_sentences`, and a chunk boundary can fall one sentence apart from theirs on
text where the two splitters disagree (docs/checkers.md). Which splitter read the chunks is part of the checker's
fingerprint (``"sentences": "punkt"`` or ``"nlgeval"``), so scores of the two are never compared as one.

    >>> checker = load_claim_checker("models/minicheck-ft5", device="cpu")          # doctest: +SKIP
    >>> checker.support(["The cat sat on the mat."], ["A cat sat."])[0].score        # doctest: +SKIP
    0.97...
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nlgeval_runtime.errors import ModelFormatError, ScoringError
from nlgeval_runtime.fingerprint import fingerprint_id, fingerprint_of
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.session import Session, check_options, create_session, verify_for
from nlgeval_runtime.tokenize import TextEncoder, pad, plan_batches

__all__ = [
    "ClaimChecker",
    "Support",
    "load_claim_checker",
    "document_sentences",
    "chunk_document",
    "punkt_tokenizer",
    "sentence_splitter",
]

KIND = "claim-support"
#: what a tokenizer-unbounded reading (HHEM) is given as its model length
_UNBOUNDED = 1 << 30
#: how far past [0, 1] a probability may stray by rounding before it is refused (within it, it is clipped)
_SLACK = 1e-6


@dataclass(frozen=True)
class Support:
    """One claim's reading: ``score`` (max over ``chunk_scores``), the ``best`` chunk, the ``chunks`` read, and
    whether an input was cut at the model's length (``truncated``) and the most tokens one took (``n_tokens``)."""

    score: float
    best: int
    chunks: tuple[str, ...]
    chunk_scores: tuple[float, ...]
    truncated: bool
    n_tokens: int


_punkt: list = []  # the English Punkt tokenizer once looked up (None when NLTK or its data is missing)


def punkt_tokenizer():
    """NLTK's English Punkt tokenizer, the one ``nltk.tokenize.sent_tokenize`` uses, or None when NLTK or its
    Punkt data (``punkt_tab``) is not installed. Looked up once per process."""
    if not _punkt:
        try:
            from nltk.tokenize import PunktTokenizer

            _punkt.append(PunktTokenizer("english"))
        except (ImportError, LookupError, OSError, ValueError):
            _punkt.append(None)
    return _punkt[0]


def sentence_splitter(reading: dict | None = None):
    """``(name, split)``: the splitter a checker's chunks are read with. A chunked reading (MiniCheck) splits as
    its authors do, with NLTK's Punkt (``"punkt"``) where it is installed, else with this runtime's
    (``"nlgeval"``); a reading without chunks splits nothing, and names ``None``."""
    if reading is not None and not reading.get("chunk"):
        return None, None
    punkt = punkt_tokenizer()
    if punkt is not None:
        return "punkt", punkt.tokenize
    from nlgeval_runtime.sentences import split_sentences

    return "nlgeval", split_sentences


def document_sentences(text: str, split=None) -> list[str]:
    """The document's sentences line by line, a ``"\\n"`` entry between lines (MiniCheck's
    ``sent_tokenize_with_newlines``); ``split`` splits one line (default: :func:`sentence_splitter`'s)."""
    if split is None:
        split = sentence_splitter()[1]
    out: list[str] = []
    for block in text.split("\n"):
        out.extend(split(block))
        out.append("\n")
    return out[:-1]


def chunk_document(text: str, size: int, count, split=None) -> list[str]:
    """MiniCheck's chunks of ``text``: whole sentences gathered while their ``count(sentence)`` stays within
    ``size``; a chunk is joined with spaces, line breaks restored, stripped; empty chunks are dropped."""
    sentences = document_sentences(text, split) or [""]
    chunks: list[str] = []
    current: list[str] = []
    total = 0
    for sentence in sentences:
        n = count(sentence)
        if total + n > size:
            chunks.append(" ".join(current))
            current, total = [sentence], n
        else:
            current.append(sentence)
            total += n
    if current:
        chunks.append(" ".join(current))
    return [c for c in (chunk.replace(" \n ", "\n").strip() for chunk in chunks) if c]


class ClaimChecker:
    """Scores (document, claim) pairs with one claim-support folder on one ONNX Runtime session."""

    def __init__(
        self,
        folder: ModelFolder,
        session: Session,
        *,
        model_ref: str | None = None,
        batch_tokens: int = 16384,
        max_batch_size: int = 16,
    ) -> None:
        if folder.kind != KIND:
            raise ModelFormatError(f"{str(folder.path)!r} holds a {folder.kind!r} model, not a fact checker ({KIND})")
        self.folder = folder
        self.session = session
        self.reading = dict(folder.manifest["reading"])
        self.name = str(self.reading["checker"])
        self.template = str(self.reading["template"])
        self.max_length = int(self.reading.get("max_length") or _UNBOUNDED)
        eos = str(self.reading["eos_token"])
        self.encoder = TextEncoder(
            folder.tokenizer_path, separator=eos, separator_token=eos, max_length=self.max_length
        )
        self.pad_id = int(folder.input_conventions["pad_token_id"])
        self.batch_tokens = int(batch_tokens)
        self.max_batch_size = int(max_batch_size) if folder.batch_invariant(session.precision) else 1
        self.model_ref = model_ref or str(folder.path)
        #: the sentence splitter of the chunks (``punkt``, ``nlgeval``, None without chunks): part of the fingerprint
        self.sentences, self._split = sentence_splitter(self.reading)
        self.fingerprint = fingerprint_of(folder, self.model_ref, session.provider, session.precision)
        if self.sentences is not None:
            self.fingerprint["sentences"] = self.sentences
        self.fingerprint_id = fingerprint_id(self.fingerprint)
        if session.input_names[:2] != ["input_ids", "attention_mask"]:
            raise ModelFormatError(
                f"{session.graph} takes inputs {session.input_names}, expected input_ids, attention_mask"
            )

    provider = property(lambda self: self.session.provider)
    precision = property(lambda self: self.session.precision)

    @property
    def supported_from(self) -> float:
        return float(self.reading.get("supported_from", 0.5))

    def _count(self, sentence: str) -> int:
        chunk = self.reading["chunk"]
        if chunk["count"] == "words":
            return len(sentence.split())
        ids = self.encoder.tokenizer.encode(sentence, add_special_tokens=False).ids
        return min(len(ids), self.max_length)  # the authors count with truncation at the model's length

    def chunks(self, document: str) -> list[str]:
        """The pieces of ``document`` the checker reads one at a time (the whole document without ``chunk``)."""
        chunk = self.reading.get("chunk")
        if not chunk:
            return [document]
        return chunk_document(document, int(chunk["size"]), self._count, self._split)

    def input_text(self, chunk: str, claim: str) -> str:
        """The text the tokenizer reads for one chunk and one claim."""
        return self.template.format(document=chunk, claim=claim)

    def score_texts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(support, truncated, n_tokens)`` of input texts (see :meth:`input_text`), in input order."""
        texts = list(texts)
        scores = np.empty(len(texts), dtype=np.float64)
        if not texts:
            return scores, np.zeros(0, bool), np.zeros(0, np.int64)
        encoded = self.encoder.encode(texts)
        limit = self.reading.get("max_tokens")
        if limit is not None and int(encoded.n_tokens.max()) > int(limit):
            raise ScoringError(
                f"{self.name} reads a document whole and one input takes {int(encoded.n_tokens.max())} tokens, more "
                f"than the {int(limit)} it is run on here; pass the part of the source the output is about, or use a "
                "checker that reads long documents in chunks (MiniCheck, docs/checkers.md)"
            )
        lengths = np.array([r.size for r in encoded.ids], dtype=np.int64)
        for batch in plan_batches(lengths, batch_tokens=self.batch_tokens, max_batch_size=self.max_batch_size):
            ids, mask = pad([encoded.ids[i] for i in batch], self.pad_id)
            (p,) = self.session.run({"input_ids": ids, "attention_mask": mask})[:1]
            scores[batch] = np.asarray(p, dtype=np.float64).reshape(-1)
        if not np.isfinite(scores).all():
            raise ScoringError(f"{self.name}: scores are not finite (precision {self.precision}); use precision 'fp32'")
        outside = (scores < -_SLACK) | (scores > 1.0 + _SLACK)
        if outside.any():
            raise ScoringError(
                f"{self.name} ({str(self.folder.path)!r}) answered {float(scores[outside][0]):g} for a (document, "
                "claim) pair, not a probability in [0, 1]: its graph gives logits where a claim-support folder's "
                "contract asks for p_supported (docs/checkers.md); export it again with `nlgeval export`"
            )
        np.clip(scores, 0.0, 1.0, out=scores)
        return scores, encoded.truncated, encoded.n_tokens

    def support(self, documents: Sequence[str], claims: Sequence[str]) -> list[Support]:
        """Each claim's support by its document: the max over the document's chunks, as the authors read it."""
        if len(documents) != len(claims):
            raise ValueError(f"{len(documents)} documents but {len(claims)} claims: pass one document per claim")
        chunked = [self.chunks(d) for d in documents]
        texts = [self.input_text(c, claim) for chunks, claim in zip(chunked, claims) for c in chunks]
        scores, truncated, n_tokens = self.score_texts(texts)
        out, at = [], 0
        for chunks in chunked:
            part = slice(at, at + len(chunks))
            at += len(chunks)
            values = tuple(float(s) for s in scores[part])
            best = int(np.argmax(values)) if values else 0
            out.append(
                Support(
                    max(values) if values else 0.0,
                    best,
                    tuple(chunks),
                    values,
                    bool(truncated[part].any()),
                    int(n_tokens[part].max()) if values else 0,
                )
            )
        return out


def load_claim_checker(
    model: str | os.PathLike,
    *,
    device: str = "auto",
    precision: str = "auto",
    threads: int | None = None,
    verify: bool = True,
    **kwargs,
) -> ClaimChecker:
    """Open the claim-support folder ``model`` and build its checker (file hashes verified first)."""
    check_options(device, precision)
    folder = ModelFolder.open(os.fspath(model))
    if folder.kind != KIND:
        raise ModelFormatError(
            f"{str(folder.path)!r} holds a {folder.kind!r} model, not a fact checker; export one with "
            "`nlgeval export lytang/MiniCheck-Flan-T5-Large OUT` (docs/checkers.md)"
        )
    if verify:
        verify_for(folder, device, precision)
    session = create_session(folder, device=device, precision=precision, threads=threads)
    return ClaimChecker(folder, session, model_ref=str(model), **kwargs)
