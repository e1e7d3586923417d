"""The causal LM of the trajectory checks: which one a reference names, and a disk cache of its log-probabilities.

A reference (``--lm`` of ``nlgeval trajectory``, ``--nlgeval-trajectory-lm``, the ``model_ref`` a bank records):

- ``None``, ``"default"`` or ``"default-lm"``: the embedded ONNX default LM (offline, no extra);
- ``"gguf:PATH"`` (or a path ending in ``.gguf``): a pretrained causal LM in a GGUF file, read through
  llama.cpp (:mod:`.gguf_lm`; ``pip install "pytest-nlgeval[llm]"``), e.g. Gemma 3 270M;
- anything else: a causal-LM model folder or Hub id (:func:`nlgeval_runtime.causal_lm.load_causal_lm`).

:class:`CachedLM` wraps any of them with a disk cache of per-token log-probabilities keyed by the LM's
fingerprint id and the exact (prompt, continuation, horizon), so a bank is fitted once and texts scored
again cost no forward pass. The records live in the score cache file (``.nlgeval-cache/scores.sqlite3``,
:class:`~pytest_nlgeval.core.cache.ScoreCache`), whose damaged-file and read-only handling they share.

    lm = load_trajectory_lm("gguf:gemma-3-270m-q4_k_m.gguf", threads=2, cache_dir=".nlgeval-cache")
    lm.score(["and then it rained."], prompts=["We went out,"], max_tokens=128)
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Sequence

import numpy as np

from pytest_nlgeval.trajectory.gguf_lm import DEFAULT_N_CTX, GGUF_PREFIX

__all__ = ["load_trajectory_lm", "lm_for_bank", "is_gguf", "gguf_path", "CachedLM", "DEFAULT_REFS"]

DEFAULT_REFS = (None, "", "default", "default-lm")
_KEY_PREFIX = "trajectory-logprobs:"
_CHUNK = 256  # texts scored between two writes to the cache


def is_gguf(ref: Any) -> bool:
    """Whether ``ref`` names a GGUF LM (``gguf:PATH`` or a ``.gguf`` path)."""
    if ref is None:
        return False
    text = os.fspath(ref) if isinstance(ref, (str, os.PathLike)) else ""
    return text.startswith(GGUF_PREFIX) or text.lower().endswith(".gguf")


def gguf_path(ref: str | os.PathLike) -> str:
    """The file path of a GGUF reference (without its ``gguf:`` prefix)."""
    text = os.fspath(ref)
    return text[len(GGUF_PREFIX) :] if text.startswith(GGUF_PREFIX) else text


def load_trajectory_lm(
    ref: str | os.PathLike | None = None,
    *,
    device: str = "auto",
    precision: str = "auto",
    threads: int | None = None,
    n_ctx: int | None = None,
    cache_dir: str | os.PathLike | None = None,
):
    """The causal-LM scorer ``ref`` names (see the module docstring), behind the disk cache when ``cache_dir``.

    ``n_ctx`` is the context of a GGUF LM (default :data:`~.gguf_lm.DEFAULT_N_CTX`); ``device`` and
    ``precision`` apply to ONNX folders (a GGUF LM runs on llama.cpp's CPU backend).
    """
    if is_gguf(ref):
        from pytest_nlgeval.trajectory.gguf_lm import load_gguf_lm

        lm: Any = load_gguf_lm(gguf_path(ref or ""), n_ctx=n_ctx or DEFAULT_N_CTX, threads=threads)
    else:
        from nlgeval_runtime.causal_lm import load_causal_lm

        model = None if ref in DEFAULT_REFS else ref
        lm = load_causal_lm(model, device=device, precision=precision, threads=threads)
    if cache_dir is not None:
        from pytest_nlgeval.core.cache import ScoreCache

        lm = CachedLM(lm, ScoreCache.in_folder(cache_dir))
    return lm


def lm_for_bank(bank, ref: str | os.PathLike | None = None, **options):
    """The LM to score against ``bank``: ``ref`` when given (``"default"`` is the default LM), else the one the
    bank names; checked against it.

    A GGUF LM is opened with the context size the bank recorded, so that long prompts are cut the same way.
    Raises :class:`~.bank.BankMismatchError` when the LM is not the bank's.
    """
    if ref is None:
        ref = bank.lm.get("model_ref")
    if is_gguf(ref) and options.get("n_ctx") is None:
        options["n_ctx"] = (bank.lm.get("fingerprint") or {}).get("n_ctx")
    lm = load_trajectory_lm(ref, **options)
    bank.check_lm(lm)
    return lm


class CachedLM:
    """Any causal-LM scorer with per-token log-probabilities cached on disk (same ``score`` contract).

    The key is the scorer's ``fingerprint_id`` (model files, tokenizer, precision or context, runtime) and
    the sha256 of the prompt, the continuation and ``max_tokens``: only the same text measured by the same
    LM the same way is reused. Everything else (``model_id``, ``encode``, ``tokenizer`` ...) is the LM's.
    """

    def __init__(self, lm, cache) -> None:
        self.lm = lm
        self.cache = cache
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str):
        return getattr(self.lm, name)

    def close(self) -> None:
        """Close the cache, and the LM when it holds a native session."""
        close = getattr(self.lm, "close", None)
        if callable(close):
            close()
        self.cache.close()

    def _key(self, prompt: str, continuation: str, max_tokens: int | None) -> str:
        payload = json.dumps([prompt, continuation, max_tokens], ensure_ascii=False)
        return f"{_KEY_PREFIX}{self.lm.fingerprint_id}:{hashlib.sha256(payload.encode('utf-8')).hexdigest()}"

    @staticmethod
    def _read(record: Any):
        try:
            ids = np.asarray(record["token_ids"], dtype=np.int64)
            lp = np.asarray(record["logprobs"], dtype=np.float64)
            n, cut = int(record["n_tokens"]), bool(record["prompt_truncated"])
        except (TypeError, KeyError, ValueError):
            return None
        if ids.ndim != 1 or ids.size == 0 or lp.shape != ids.shape or not np.all(np.isfinite(lp)):
            return None
        return ids, lp, n, cut

    def score(
        self,
        continuations: Sequence[str],
        prompts: Sequence[str] | None = None,
        *,
        max_tokens: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ):
        from nlgeval_runtime.causal_lm import CausalLMResult

        continuations = list(continuations)
        prompts = [""] * len(continuations) if prompts is None else list(prompts)
        if len(prompts) != len(continuations):
            raise ValueError(f"{len(continuations)} continuations but {len(prompts)} prompts; pass one prompt each")
        if not all(isinstance(t, str) and isinstance(p, str) for t, p in zip(continuations, prompts)):
            raise TypeError("continuations and prompts must be str")
        keys = [self._key(p, c, max_tokens) for p, c in zip(prompts, continuations)]
        found: dict[int, tuple] = {}
        for i, key in enumerate(keys):
            got = self._read(self.cache.get_meta(key))
            if got is not None:
                found[i] = got
        todo = [i for i in range(len(keys)) if i not in found]
        self.hits += len(found)
        self.misses += len(todo)
        done = len(found)
        for start in range(0, len(todo), _CHUNK):
            # scored and stored a chunk at a time: an interrupted fit keeps what it measured
            part = todo[start : start + _CHUNK]

            def step(k: int, total: int, before: int = done, report: Any = progress) -> None:
                report(before + k, len(keys))

            res = self.lm.score(
                [continuations[i] for i in part],
                [prompts[i] for i in part],
                max_tokens=max_tokens,
                progress=step if progress is not None else None,
            )
            for k, i in enumerate(part):
                found[i] = (res.token_ids[k], res.logprobs[k], int(res.n_tokens[k]), bool(res.prompt_truncated[k]))
                self.cache.put_meta(
                    keys[i],
                    {
                        "token_ids": [int(t) for t in res.token_ids[k]],
                        "logprobs": [float(v) for v in res.logprobs[k]],
                        "n_tokens": int(res.n_tokens[k]),
                        "prompt_truncated": bool(res.prompt_truncated[k]),
                    },
                )
            done += len(part)
        if not todo and progress is not None and keys:
            progress(len(keys), len(keys))
        rows = [found[i] for i in range(len(keys))]
        return CausalLMResult(
            [r[0] for r in rows],
            [r[1] for r in rows],
            np.array([r[2] for r in rows], dtype=np.int64),
            np.array([r[3] for r in rows], dtype=bool),
        )
