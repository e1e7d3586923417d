"""Causal-LM scorer: per-token log-probabilities of a continuation given a prompt, on ONNX Runtime.

The trajectory checks measure coherence as the cumulative mean of next-token log-probabilities of a
continuation conditioned on its prompt. Following the trajectory paper's extraction (its appendix E):
prompt and continuation are whitespace-stripped and tokenised **separately** without special tokens,
exactly one BOS token is prepended, and one forward pass per text gives every position's log-probability
(never one pass per prefix).

A ``causal-lm`` model folder (docs/model-folder.md) holds a graph
``(input_ids, attention_mask) -> token_logprobs [batch, seq - 1]`` where position ``i`` is
``log p(input_ids[i + 1] | input_ids[:i + 1])``; ``nlgeval_training.export_causal`` writes such folders
from any Hugging Face causal LM, and the package ships a small default one (``default_lm/``).

Example::

    lm = load_causal_lm()                                  # the shipped default LM, CPU
    res = lm.score(["and then it rained."], prompts=["We went out,"], max_tokens=128)
    res.logprobs[0]       # float64 array, one log-probability per continuation token
    res.token_ids[0]      # the continuation's token ids (the same positions)

When ``BOS + prompt + continuation`` exceeds the model's context, the prompt loses its beginning (the
most recent context is kept) and ``prompt_truncated`` says so; a continuation longer than the context
minus one is cut to it (``n_tokens`` keeps the length before the cut).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from nlgeval_runtime.errors import ModelFormatError, ScoringError
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.session import Session, check_options, create_session, verify_for
from nlgeval_runtime.tokenize import pad, plan_batches

__all__ = ["CausalLMResult", "CausalLMScorer", "default_lm_path", "load_causal_lm", "plan_rows"]

OUTPUT = "token_logprobs"


def default_lm_path() -> Path:
    """The folder of the small default causal LM that ships with the runtime."""
    return Path(__file__).resolve().parent / "default_lm"


@dataclass
class CausalLMResult:
    token_ids: list[np.ndarray]  # int64 continuation token ids per input (after any cut)
    logprobs: list[np.ndarray]  # float64 log p of each of those tokens given BOS + prompt + earlier tokens
    n_tokens: np.ndarray  # int64: continuation tokens before max_tokens / context cuts
    prompt_truncated: np.ndarray  # bool: the prompt lost its beginning to fit the context


class CausalLMScorer:
    """Next-token log-probabilities of continuations, batched on one ONNX Runtime session."""

    def __init__(
        self,
        folder: ModelFolder,
        session: Session,
        *,
        model_ref: str | None = None,
        batch_tokens: int = 16384,
        max_batch_size: int = 64,
    ):
        from tokenizers import Tokenizer

        from nlgeval_runtime.fingerprint import fingerprint_id, fingerprint_of

        if folder.kind != "causal-lm":
            raise ModelFormatError(
                f"{str(folder.path)!r} holds a {folder.kind!r} model, not a causal LM; trajectory coherence needs "
                "a causal-LM folder (export one with nlgeval_training.export_causal or use the default)"
            )
        conventions = folder.input_conventions
        for key in ("max_length", "bos_token_id", "pad_token_id"):
            if not isinstance(conventions.get(key), int):
                raise ModelFormatError(f"{str(folder.path)!r}: nlgeval.json 'input.{key}' must be an integer")
        self.folder = folder
        self.session = session
        self.model_ref = model_ref or str(folder.path)
        self.batch_tokens = int(batch_tokens)
        self.max_batch_size = int(max_batch_size)
        self.max_length = int(conventions["max_length"])
        self.bos_token_id = int(conventions["bos_token_id"])
        self.pad_id = int(conventions["pad_token_id"])
        try:
            self.tokenizer = Tokenizer.from_file(str(folder.tokenizer_path))
        except Exception as exc:  # the tokenizers library raises plain Exceptions on bad files
            raise ModelFormatError(f"cannot read tokenizer {str(folder.tokenizer_path)!r}: {exc}") from exc
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        names = session.input_names
        if names[:2] != ["input_ids", "attention_mask"]:
            raise ModelFormatError(f"{session.graph} takes inputs {names}, expected ['input_ids', 'attention_mask']")
        outputs = [o.name for o in session.inner.get_outputs()]
        if OUTPUT not in outputs:
            raise ModelFormatError(f"{session.graph} has outputs {outputs}; a causal-LM graph outputs {OUTPUT!r}")
        self.fingerprint = fingerprint_of(folder, self.model_ref, session.provider, session.precision)
        self.fingerprint_id = fingerprint_id(self.fingerprint)
        files = folder.manifest["files"]
        #: sha256 of the tokenizer file: token ids (and so diversity) depend on it alone.
        self.tokenizer_sha256 = files[folder.tokenizer_path.name]
        graph_name = folder.variants[session.precision]
        #: Identity of the numbers this scorer produces: graph and tokenizer hashes, precision.
        self.model_id = hashlib.sha256(
            f"{files[graph_name]}:{self.tokenizer_sha256}:{session.precision}".encode()
        ).hexdigest()[:16]

    provider = property(lambda self: self.session.provider)
    precision = property(lambda self: self.session.precision)

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` as the scorer sees it: stripped, no special tokens."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        stripped = text.strip()
        if not stripped:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.tokenizer.encode(stripped, add_special_tokens=False).ids, dtype=np.int64)

    def logprobs_of_ids(self, rows: Sequence[Sequence[int] | np.ndarray]) -> list[np.ndarray]:
        """Log-probabilities of tokens ``1 .. n-1`` of each id row (rows are used as given, BOS included)."""
        arrays = [np.asarray(r, dtype=np.int64) for r in rows]
        out: list[np.ndarray] = [np.zeros(0)] * len(arrays)
        if not arrays:
            return out
        for i, r in enumerate(arrays):
            if r.ndim != 1 or r.size < 2:
                raise ValueError(f"rows[{i}] must hold at least two token ids (BOS and one token)")
            if r.size > self.max_length:
                raise ValueError(f"rows[{i}] has {r.size} tokens; the model's context is {self.max_length}")
        lengths = np.array([r.size for r in arrays], dtype=np.int64)
        for batch in plan_batches(lengths, batch_tokens=self.batch_tokens, max_batch_size=self.max_batch_size):
            ids, mask = pad([arrays[i] for i in batch], self.pad_id)
            (lp,) = self.session.inner.run([OUTPUT], {"input_ids": ids, "attention_mask": mask})
            lp = np.asarray(lp, dtype=np.float64)
            for row, i in enumerate(batch):
                out[i] = lp[row, : lengths[i] - 1]
        return out

    def score(
        self,
        continuations: Sequence[str],
        prompts: Sequence[str] | None = None,
        *,
        max_tokens: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> CausalLMResult:
        """Per-token log-probabilities of each continuation given its prompt (None: no prompt).

        ``max_tokens`` keeps the first tokens of each continuation (the trajectory horizon). Results come
        back in input order; an empty continuation is an error naming its index.
        """
        rows, cont_ids, n_tokens, cut = plan_rows(
            self.encode, self.bos_token_id, self.max_length, continuations, prompts, max_tokens
        )
        logprobs: list[np.ndarray] = []
        done = 0
        chunk = max(1, self.max_batch_size * 4)
        for start in range(0, len(rows), chunk):
            part = self.logprobs_of_ids(rows[start : start + chunk])
            for k, lp in enumerate(part):
                logprobs.append(lp[lp.size - cont_ids[start + k].size :])
            done += len(part)
            if progress is not None:
                progress(done, len(rows))
        bad = [i for i, lp in enumerate(logprobs) if not np.all(np.isfinite(lp))]
        if bad:
            raise ScoringError(
                f"{len(bad)} of {len(rows)} continuations got non-finite log-probabilities "
                f"(first: {bad[0]}, precision {self.precision}); use precision 'fp32'"
            )
        return CausalLMResult(cont_ids, logprobs, n_tokens, cut)


def load_causal_lm(
    model: str | os.PathLike | None = None,
    *,
    device: str = "auto",
    precision: str = "auto",
    threads: int | None = None,
    batch_tokens: int = 16384,
    max_batch_size: int = 64,
    cache_dir: str | os.PathLike | None = None,
    verify: bool = True,
) -> CausalLMScorer:
    """Load a causal-LM folder (None/``"default"``: the shipped default LM; else a folder or Hub id).

    File hashes are verified before the session is created, as for the Boolean-QA scorer.

        >>> lm = load_causal_lm(device="cpu", threads=1)             # doctest: +SKIP
        >>> lm.score(["It rained."], prompts=["Yesterday"]).logprobs  # doctest: +SKIP
    """
    check_options(device, precision)
    if model is None or str(model) in ("default", "default-lm"):
        path = default_lm_path()
        ref = "default-lm"
        if not (path / "nlgeval.json").is_file():
            raise ModelFormatError(
                f"the default causal LM is missing from this installation ({path}); pass a causal-LM folder "
                "exported with nlgeval_training.export_causal, or reinstall nlgeval-runtime"
            )
    else:
        from nlgeval_runtime.resolve import resolve_model

        path = resolve_model(model, cache_dir=cache_dir, kind="causal-lm")
        ref = str(model)
    folder = ModelFolder.open(path)
    if folder.kind != "causal-lm":
        raise ModelFormatError(
            f"model {ref!r} ({path}) is a {folder.kind!r} model folder, not a causal LM; pass a folder exported "
            "with `python -c \"from nlgeval_training.export_causal import export_causal_lm; "
            "export_causal_lm('gpt2', 'DIR')\"` or use the default LM"
        )
    if verify:
        verify_for(folder, device, precision)
    session = create_session(folder, device=device, precision=precision, threads=threads)
    return CausalLMScorer(folder, session, model_ref=ref, batch_tokens=batch_tokens, max_batch_size=max_batch_size)


def plan_rows(
    encode: Callable[[str], np.ndarray],
    bos_token_id: int,
    max_length: int,
    continuations: Sequence[str],
    prompts: Sequence[str] | None = None,
    max_tokens: int | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """The id rows a causal LM scores for each continuation given its prompt: ``(rows, continuation ids,
    continuation lengths before the cut, whether the prompt lost its beginning)``.

    A row is BOS, the prompt's last tokens that fit, then the continuation's first ``max_tokens`` tokens
    (every causal LM of the trajectory checks uses this contract, whatever runs it). An empty continuation,
    a prompt count that does not match, or a non-string is an error naming the index.
    """
    continuations = list(continuations)
    prompts = [""] * len(continuations) if prompts is None else list(prompts)
    if len(prompts) != len(continuations):
        raise ValueError(f"{len(continuations)} continuations but {len(prompts)} prompts; pass one prompt each")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, not {max_tokens}")
    rows: list[np.ndarray] = []
    cont_ids: list[np.ndarray] = []
    n_tokens = np.zeros(len(continuations), np.int64)
    cut = np.zeros(len(continuations), bool)
    room = max_length - 1  # BOS takes one position
    for i, (prompt, text) in enumerate(zip(prompts, continuations)):
        if not isinstance(text, str) or not isinstance(prompt, str):
            raise TypeError(f"continuation and prompt {i} must be str")
        c = encode(text)
        if c.size == 0:
            raise ValueError(f"continuation {i} is empty (or only whitespace); there is nothing to score")
        n_tokens[i] = c.size
        c = c[: min(room, max_tokens or room)]
        p = encode(prompt)
        keep = room - c.size
        if p.size > keep:
            p = p[p.size - keep :] if keep > 0 else p[:0]
            cut[i] = True
        rows.append(np.concatenate([[bos_token_id], p, c]).astype(np.int64))
        cont_ids.append(c)
    return rows, cont_ids, n_tokens, cut
