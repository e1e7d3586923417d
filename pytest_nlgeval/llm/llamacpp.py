"""llama.cpp (llama-cpp-python) without the CPU weight-repacking crash, and a judge server built on it.

llama.cpp repacks quantised weights into "extra buffer types" for the CPU's wide vector instructions. With
llama-cpp-python 0.3.x some models (Gemma 3 270M in Q4_K_M among them) crash in decoding on CPUs with
AVX-512/AMX when it does. Turning the repacking off (the model parameter ``use_extra_bufts = False``) avoids
the crash, at some speed on those CPUs. ``llama_cpp.Llama`` builds its model parameters from
``llama_model_default_params()`` and exposes no argument for it, and neither do the settings of
``python -m llama_cpp.server``; so :func:`no_weight_repacking` changes the defaults for the code it wraps::

    with no_weight_repacking():
        llm = llama_cpp.Llama(model_path=path, n_ctx=512)

and ``python -m pytest_nlgeval.llm.llamacpp ARGS`` is ``python -m llama_cpp.server ARGS`` with the repacking off:
an OpenAI-compatible server for ``assert_judged`` (``--nlgeval-judge-lm openai/ALIAS
--nlgeval-judge-api-base http://127.0.0.1:PORT/v1``).

Its completions endpoint reads one token's distribution in one decoding step (:func:`one_step_completions`).
llama-cpp-python returns log-probabilities only from a model that keeps the logits of every prompt token
(``logits_all``), and then normalises and sorts the whole vocabulary for every row it holds: with Gemma's 262k
tokens a 600-token prompt costs seconds before the first token. A judge that reads the scale asks for exactly
one token (``max_tokens=1``, temperature 0, ``logprobs=k``); that request is answered from the last prompt
position's logits alone, after decoding only the part of the prompt that differs from the previous one (the
criterion, its steps and the article are shared by every summary of the article).

llama.cpp comes with ``pip install "pytest-nlgeval[llm]"``, the server with
``pip install "llama-cpp-python[server]"``. (The trajectory checks' GGUF LM, :mod:`pytest_nlgeval.trajectory.gguf_lm`,
turns the repacking off through llama.cpp's C API itself.)
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

__all__ = ["no_weight_repacking", "one_step_completions", "serve"]


@contextlib.contextmanager
def no_weight_repacking() -> Iterator[None]:
    """Inside the block, llama.cpp models are loaded with ``use_extra_bufts = False`` (no CPU repacking)."""
    from pytest_nlgeval.util.extras import require

    low = require("llama_cpp.llama_cpp", "a llama.cpp model")
    original = low.llama_model_default_params

    def defaults():
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    low.llama_model_default_params = defaults
    try:
        yield
    finally:
        low.llama_model_default_params = original


def _fast_request(prompt, kwargs: dict) -> bool:
    """Whether a completion request asks only for the next token's greedy choice and top log-probabilities."""
    return (
        isinstance(prompt, str)
        and bool(prompt)
        and kwargs.get("max_tokens") == 1
        and isinstance(kwargs.get("logprobs"), int)
        and kwargs["logprobs"] > 0
        and float(kwargs.get("temperature", 0.8) or 0.0) <= 0.0
        and not kwargs.get("stream")
        and not kwargs.get("echo")
        and kwargs.get("suffix") is None
        and kwargs.get("grammar") is None
        and not kwargs.get("logit_bias")
        and kwargs.get("logits_processor") is None
    )


def one_step_logprobs(llm, prompt: str, top: int) -> dict:
    """An OpenAI completion of one greedy token with the ``top`` log-probabilities of its position, decoding
    only the prompt tokens that differ from the model's previous prompt, with logits for the last one only."""
    import time
    import uuid

    import numpy as np

    tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
    if len(tokens) >= llm.n_ctx():
        raise ValueError(f"Requested tokens ({len(tokens)}) exceed context window of {llm.n_ctx()}")
    held = list(llm.input_ids[: llm.n_tokens])
    shared = 0
    for a, b in zip(held, tokens):
        if a != b:
            break
        shared += 1
    shared = min(shared, len(tokens) - 1)  # the last token is decoded again: its logits are the answer
    if shared > 0 and llm._ctx.kv_cache_seq_rm(-1, shared, -1):
        llm.n_tokens = shared
    else:
        llm.reset()
        shared = 0
    keep_all = llm._logits_all
    llm._logits_all = False  # logits of each batch's last token only
    try:
        llm.eval(tokens[shared:])
    finally:
        llm._logits_all = keep_all
    vocab = llm.n_vocab()
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(vocab,)).astype(np.float64)
    if keep_all:
        llm.scores[llm.n_tokens - 1, :] = logits  # the row a later request of the library's own path reads
    llm._nlgeval_rows_stale = True
    peak = float(np.max(logits))
    logprobs = logits - (peak + float(np.log(np.sum(np.exp(logits - peak)))))
    k = max(1, min(int(top), vocab))
    best = np.argpartition(-logprobs, k - 1)[:k]
    best = best[np.argsort(-logprobs[best], kind="stable")]
    chosen = int(best[0])

    def text(token: int) -> str:
        return llm.detokenize([token]).decode("utf-8", errors="ignore")

    top_logprobs: dict[str, float] = {}
    for token in best:
        top_logprobs.setdefault(text(int(token)), float(logprobs[int(token)]))
    return {
        "id": f"cmpl-{uuid.uuid4()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": llm.model_path,
        "choices": [
            {
                "text": text(chosen),
                "index": 0,
                "logprobs": {
                    "tokens": [text(chosen)],
                    "text_offset": [len(prompt)],
                    "token_logprobs": [float(logprobs[chosen])],
                    "top_logprobs": [top_logprobs],
                },
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1, "total_tokens": len(tokens) + 1},
    }


@contextlib.contextmanager
def one_step_completions() -> Iterator[None]:
    """Inside the block, ``Llama.create_completion`` answers a request for one greedy token with its top
    log-probabilities by :func:`one_step_logprobs` (one decoding step over the new part of the prompt);
    every other request goes the library's own way, after a reset where the fast path left rows of logits
    unwritten."""
    from pytest_nlgeval.util.extras import require

    llama = require("llama_cpp", "a llama.cpp model")
    original = llama.Llama.create_completion

    def create_completion(self, prompt, *args, **kwargs):
        if not args and _fast_request(prompt, kwargs):
            return one_step_logprobs(self, prompt, kwargs["logprobs"])
        if getattr(self, "_nlgeval_rows_stale", False):
            self.reset()  # the library reads logits rows the fast path did not write
            self._nlgeval_rows_stale = False
        return original(self, prompt, *args, **kwargs)

    llama.Llama.create_completion = create_completion
    try:
        yield
    finally:
        llama.Llama.create_completion = original


def serve(argv: list[str] | None = None) -> None:
    """Run llama-cpp-python's OpenAI-compatible server (its own arguments) with the repacking off."""
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    with no_weight_repacking(), one_step_completions():
        try:
            from llama_cpp.server.__main__ import main
        except ImportError as exc:
            from pytest_nlgeval.errors import UsageError

            raise UsageError(
                f"the llama.cpp server needs llama-cpp-python's server extra ({exc}): "
                "pip install \"llama-cpp-python[server]\""
            ) from None
        main()


if __name__ == "__main__":  # pragma: no cover - run as a server process by the tests
    serve()
