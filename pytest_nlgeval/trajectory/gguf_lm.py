"""A pretrained causal LM in a GGUF file, read through llama.cpp (``pip install "pytest-nlgeval[llm]"``).

The same interface as :class:`nlgeval_runtime.causal_lm.CausalLMScorer` (``score``, ``encode``,
``logprobs_of_ids``, ``model_id``, ``tokenizer_sha256``, ``fingerprint``), so a reference bank can be fitted
and scored with any GGUF causal LM, e.g. Gemma 3 270M::

    lm = load_gguf_lm("gemma-3-270m-q4_k_m.gguf", n_ctx=512, threads=2)
    res = lm.score(["and then it rained."], prompts=["We went out,"], max_tokens=128)
    res.logprobs[0]     # log p of each continuation token given BOS + prompt + earlier tokens

The extraction is the one of the ONNX scorer (the trajectory paper, appendix E): prompt and continuation are
stripped and tokenised separately without special tokens, one BOS is prepended, and one forward pass per text
gives every position. llama.cpp returns raw logits; the log-softmax is computed here in float64, a few rows
at a time (a Gemma 3 row has 262,144 logits), and only for the positions whose log-probability is asked for
(llama.cpp computes the output layer only for them).

**CPU weight repacking.** llama.cpp repacks quantised weights into CPU-specific layouts ("extra buffer
types", e.g. for AVX512 and AMX). With llama-cpp-python 0.3.36 decoding Gemma 3 with those buffers crashed
the process on an AVX512/AMX CPU, so the model is loaded with ``use_extra_bufts = False`` (plain layouts;
the same numbers, a little slower where repacking works). ``llama_cpp.Llama`` builds its model parameters
internally and exposes no such switch, so this module uses llama.cpp's C API through llama-cpp-python's
bindings (model, context, batch) directly.

**Fixed arithmetic.** With a quantised model, llama.cpp's log-probabilities move by up to about 0.1 nat per
token with the way a text is split into decode calls and with the attention kernel (measured on Gemma 3 270M
Q4_K_M: one call against calls of 7 tokens, or flash attention on against off). So every text is decoded in
one call (the batch is the whole context), flash attention is off (as in ``llama_cpp.Llama``'s default, whose
``logits_all`` output the tests compare with), and the KV cache keeps llama.cpp's default f16.

The identity a bank records: ``tokenizer_sha256`` hashes the vocabulary (every token's text, score and
type, BOS id), ``model_id`` the file's sha256, the tokenizer hash, the context size (which decides how much
of a long prompt is kept), the KV-cache type and the attention kernel. A different file, quantisation or
context size is a different LM for :meth:`~pytest_nlgeval.trajectory.bank.ReferenceBank.check_lm`.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from pytest_nlgeval.errors import NLGEvalError

__all__ = ["GGUFCausalLM", "GGUFError", "load_gguf_lm", "file_sha256", "DEFAULT_N_CTX", "GGUF_PREFIX", "log_softmax_at"]

#: Context (tokens) of a GGUF LM unless given: BOS + prompt + the default horizon of 128 fit easily.
DEFAULT_N_CTX = 512
#: Prefix of a GGUF LM reference (``gguf:PATH``) in options, banks and the command line.
GGUF_PREFIX = "gguf:"
_FEATURE = "the GGUF trajectory LM"
_ROWS_PER_BLOCK = 16  # logits rows turned into log-probabilities at a time (16 x 262,144 float64 = 32 MB)
_BACKEND = threading.Lock()
_BACKEND_READY = False
_HASHES: dict[tuple[str, int, int], str] = {}


class GGUFError(NLGEvalError, ValueError):
    """A GGUF LM file is missing or unreadable, or llama.cpp failed on it."""


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime) in this process (a GGUF file is large)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def log_softmax_at(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``log softmax(logits[i])[targets[i]]`` for every row, ``_ROWS_PER_BLOCK`` rows at a time.

    The exponentials are taken in the logits' float32 after subtracting the row maximum (every term in
    (0, 1]) and summed in float64, so the log-normaliser is exact to about 1e-7; the result is float64.
    """
    out = np.empty(len(targets), dtype=np.float64)
    for start in range(0, len(targets), _ROWS_PER_BLOCK):
        block = np.asarray(logits[start : start + _ROWS_PER_BLOCK])
        rows = np.arange(block.shape[0])
        top = block.max(axis=1, keepdims=True)
        total = np.exp(block - top).sum(axis=1, dtype=np.float64)
        picked = block[rows, targets[start : start + block.shape[0]]].astype(np.float64)
        out[start : start + block.shape[0]] = picked - top[:, 0].astype(np.float64) - np.log(total)
    return out


def _llama_cpp():
    from pytest_nlgeval.util.extras import require

    return require("llama_cpp", _FEATURE)


def _init_backend(llama_cpp) -> None:
    global _BACKEND_READY
    with _BACKEND:
        if not _BACKEND_READY:
            llama_cpp.llama_backend_init()
            _BACKEND_READY = True


class GGUFTokenizer:
    """The GGUF file's own tokenizer (llama.cpp's), with ``encode`` and ``decode`` on token ids."""

    def __init__(self, llama_cpp, vocab, n_vocab: int):
        self._c = llama_cpp
        self._vocab = vocab
        self.n_vocab = n_vocab

    def encode_ids(self, text: str) -> list[int]:
        raw = text.encode("utf-8")
        capacity = len(raw) + 8
        while True:
            buf = (self._c.llama_token * capacity)()
            n = self._c.llama_tokenize(self._vocab, raw, len(raw), buf, capacity, False, False)
            if n >= 0:
                return list(buf[:n])
            capacity = -n

    def decode(self, ids: Sequence[int]) -> str:
        pieces = bytearray()
        buf = ctypes.create_string_buffer(256)
        for token in ids:
            n = self._c.llama_token_to_piece(self._vocab, int(token), buf, len(buf), 0, False)
            if n > 0:
                pieces += buf.raw[:n]
        return pieces.decode("utf-8", errors="replace")

    def sha256(self, bos: int) -> str:
        """Hash of the vocabulary: every token's text, score and attributes, and the BOS id."""
        digest = hashlib.sha256(f"{self.n_vocab}:{bos}".encode())
        for token in range(self.n_vocab):
            text = self._c.llama_vocab_get_text(self._vocab, token) or b""
            score = float(self._c.llama_vocab_get_score(self._vocab, token))
            attr = int(self._c.llama_vocab_get_attr(self._vocab, token))
            digest.update(b"%d\0%s\0%r\0%d\n" % (token, text, score, attr))
        return digest.hexdigest()


class GGUFCausalLM:
    """Next-token log-probabilities of continuations from a GGUF causal LM (llama.cpp on the CPU).

    One text per forward pass, in one decode call; not thread-safe (one llama.cpp context).
    """

    provider = "llama.cpp-cpu"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        threads: int | None = None,
        model_ref: str | None = None,
        verbose: bool = False,
    ):
        llama_cpp = _llama_cpp()
        path = Path(path).expanduser()
        if not path.is_file():
            raise GGUFError(
                f"GGUF LM file {str(path)!r} does not exist; pass the path of a .gguf causal LM "
                f"(e.g. `--lm gguf:/path/to/model.gguf`)"
            )
        with open(path, "rb") as handle:
            magic = handle.read(4)
        if magic != b"GGUF":
            raise GGUFError(
                f"{str(path)!r} is not a GGUF file (it starts with {magic!r}, not b'GGUF'); pass a llama.cpp model file"
            )
        if n_ctx < 8:
            raise GGUFError(f"n_ctx must be at least 8 tokens, not {n_ctx}")
        if not verbose:
            logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
        _init_backend(llama_cpp)
        self._c = llama_cpp
        self.path = path.resolve()
        self.model_ref = model_ref or GGUF_PREFIX + str(self.path)
        self.threads = int(threads or os.cpu_count() or 1)
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = 0
        params.use_extra_bufts = False  # see the module docstring: repacked CPU weights crash decoding
        self._model = llama_cpp.llama_model_load_from_file(str(self.path).encode("utf-8"), params)
        if not self._model:
            raise GGUFError(
                f"llama.cpp could not load {str(path)!r} as a model (an unsupported architecture or a "
                "damaged file); pass a causal LM in GGUF format"
            )
        vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(vocab))
        self.bos_token_id = int(llama_cpp.llama_vocab_bos(vocab))
        if self.bos_token_id < 0:
            raise GGUFError(f"{str(path)!r} defines no BOS token; the trajectory extraction prepends one")
        self.tokenizer = GGUFTokenizer(llama_cpp, vocab, self.n_vocab)
        train_ctx = int(llama_cpp.llama_model_n_ctx_train(self._model))
        self.max_length = int(min(n_ctx, train_ctx)) if train_ctx > 0 else int(n_ctx)
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = self.max_length
        self.n_batch = self.max_length  # one decode call per text: see "Fixed arithmetic" above
        cparams.n_batch = self.n_batch
        cparams.n_ubatch = self.n_batch
        cparams.n_seq_max = 1
        cparams.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.flash_attn = False
        cparams.n_threads = self.threads
        cparams.n_threads_batch = self.threads
        self._ctx = llama_cpp.llama_init_from_model(self._model, cparams)
        if not self._ctx:
            raise GGUFError(f"llama.cpp could not create a context of {self.max_length} tokens for {str(path)!r}")
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        buf = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(self._model, buf, len(buf))
        self.description = buf.value.decode("utf-8", errors="replace")
        self.file_sha256 = file_sha256(self.path)
        #: sha256 of the vocabulary: token ids (and so diversity) depend on it alone.
        self.tokenizer_sha256 = self.tokenizer.sha256(self.bos_token_id)
        self.precision = "gguf"
        self.kv_type = "f16"  # llama.cpp's default KV-cache type, left as it is
        self.fingerprint = {
            "model": self.model_ref,
            "kind": "causal-lm",
            "architecture": self.description,
            "files": {self.path.name: self.file_sha256},
            "provider": self.provider,
            "precision": self.precision,
            "n_ctx": self.max_length,
            "kv_type": self.kv_type,
            "flash_attn": self.flash_attn,
            "decode": "one call per text",
            "llama_cpp_version": getattr(llama_cpp, "__version__", "?"),
        }
        from nlgeval_runtime.fingerprint import fingerprint_id

        self.fingerprint_id = fingerprint_id(self.fingerprint)
        #: Identity of the numbers this scorer produces: file and vocabulary hashes, context, KV type.
        self.model_id = hashlib.sha256(
            f"gguf:{self.file_sha256}:{self.tokenizer_sha256}:{self.max_length}:{self.kv_type}:"
            f"fa={int(self.flash_attn)}".encode()
        ).hexdigest()[:16]

    def close(self) -> None:
        """Free the llama.cpp context and model (also done when the object is collected)."""
        c = getattr(self, "_c", None)
        if c is None:
            return
        if getattr(self, "_batch", None) is not None:
            c.llama_batch_free(self._batch)
            self._batch = None
        if getattr(self, "_ctx", None):
            c.llama_free(self._ctx)
            self._ctx = None
        if getattr(self, "_model", None):
            c.llama_model_free(self._model)
            self._model = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the bindings may already be gone
            pass

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` as the scorer sees it: stripped, no special tokens."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        stripped = text.strip()
        if not stripped:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.tokenizer.encode_ids(stripped), dtype=np.int64)

    def _row_logprobs(self, row: np.ndarray, first: int) -> np.ndarray:
        """Log-probabilities of ``row[first:]`` given the tokens before each (one pass over ``row``)."""
        c = self._c
        if not self._ctx:
            raise GGUFError(f"the GGUF LM {self.model_ref!r} was closed")
        mem = c.llama_get_memory(self._ctx)
        c.llama_memory_clear(mem, True)
        n = int(row.size)
        out = np.empty(n - first, dtype=np.float64)
        batch = self._batch
        for start in range(0, n, self.n_batch):
            stop = min(n, start + self.n_batch)
            wanted = []  # positions whose logits predict a wanted token: first - 1 .. n - 2
            for k, pos in enumerate(range(start, stop)):
                batch.token[k] = int(row[pos])
                batch.pos[k] = pos
                batch.n_seq_id[k] = 1
                batch.seq_id[k][0] = 0
                want = first - 1 <= pos <= n - 2
                batch.logits[k] = 1 if want else 0
                if want:
                    wanted.append(pos)
            batch.n_tokens = stop - start
            status = c.llama_decode(self._ctx, batch)
            if status != 0:
                raise GGUFError(
                    f"llama.cpp failed to decode {stop - start} tokens of {self.model_ref!r} (status {status})"
                )
            if wanted:
                logits = np.ctypeslib.as_array(c.llama_get_logits(self._ctx), shape=(len(wanted), self.n_vocab))
                targets = row[np.asarray(wanted) + 1]
                lo = wanted[0] - (first - 1)
                out[lo : lo + len(wanted)] = log_softmax_at(logits, targets)
        return out

    def logprobs_of_ids(self, rows: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Log-probabilities of tokens ``1 .. n-1`` of each id row (rows are used as given, BOS included)."""
        arrays = [np.asarray(r, dtype=np.int64) for r in rows]
        for i, r in enumerate(arrays):
            if r.ndim != 1 or r.size < 2:
                raise ValueError(f"rows[{i}] must hold at least two token ids (BOS and one token)")
            if r.size > self.max_length:
                raise ValueError(f"rows[{i}] has {r.size} tokens; the model's context is {self.max_length}")
            if r.min() < 0 or r.max() >= self.n_vocab:
                raise ValueError(f"rows[{i}] holds token ids outside the vocabulary of {self.n_vocab}")
        return [self._row_logprobs(r, 1) for r in arrays]

    def score(
        self,
        continuations: Sequence[str],
        prompts: Sequence[str] | None = None,
        *,
        max_tokens: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ):
        """Per-token log-probabilities of each continuation given its prompt (None: no prompt).

        The same contract as :meth:`nlgeval_runtime.causal_lm.CausalLMScorer.score`: ``max_tokens`` keeps
        the first tokens of each continuation; a prompt too long for the context loses its beginning.
        """
        from nlgeval_runtime.causal_lm import CausalLMResult, plan_rows

        rows, cont_ids, n_tokens, cut = plan_rows(
            self.encode, self.bos_token_id, self.max_length, continuations, prompts, max_tokens
        )
        plans = list(zip(rows, cont_ids))
        logprobs = []
        for i, (row, cont) in enumerate(plans):
            logprobs.append(self._row_logprobs(row, row.size - cont.size))
            if progress is not None:
                progress(i + 1, len(plans))
        bad = [i for i, lp in enumerate(logprobs) if not np.all(np.isfinite(lp))]
        if bad:
            raise GGUFError(
                f"{len(bad)} of {len(plans)} continuations got non-finite log-probabilities from "
                f"{self.model_ref!r} (first: {bad[0]})"
            )
        return CausalLMResult([c for _, c in plans], logprobs, n_tokens, cut)


def load_gguf_lm(
    path: str | os.PathLike, *, n_ctx: int = DEFAULT_N_CTX, threads: int | None = None, verbose: bool = False
) -> GGUFCausalLM:
    """Load a GGUF causal LM (``path`` may carry the ``gguf:`` prefix)."""
    text = os.fspath(path)
    if text.startswith(GGUF_PREFIX):
        text = text[len(GGUF_PREFIX) :]
    return GGUFCausalLM(text, n_ctx=n_ctx, threads=threads, verbose=verbose)
