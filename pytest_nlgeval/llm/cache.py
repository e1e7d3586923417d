"""A disk cache in front of any ``dspy.LM``, keyed by everything that determines the answer.

The key is the SHA-256 of the canonical JSON of: the model id, the model type, every request parameter
(the LM's defaults merged with the call's, e.g. temperature, max_tokens, api_base, rollout_id; the API key
is left out because it does not change the answer and must not be written to disk) and the full prompt
or message list. Keying on the model name alone (a defect of the reference toolkit) would hand a
temperature-0.0 answer to a temperature-1.0 request, or one server's answer to another's.

Calls that reach the model and calls answered from the cache are counted, with the tokens the model
reported, so the command line and the report can show what an induction cost.

Example::

    >>> import dspy                                                                 # doctest: +SKIP
    >>> lm = cached_lm(dspy.LM("openai/qwen2.5-7b", api_base="http://localhost:8000/v1"))  # doctest: +SKIP
    >>> lm.usage.summary()                                                          # doctest: +SKIP
    '0 LLM calls (0 from cache), 0 prompt + 0 completion tokens'
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pytest_nlgeval.core.cache import CacheWarning
from pytest_nlgeval.llm.errors import (
    JudgeServerError,
    JudgeServerHTTPError,
    JudgeServerTimeout,
    JudgeServerUnreachable,
    JudgesUnavailable,
    _server_error,
)

__all__ = [
    "LLMUsage",
    "cached_lm",
    "default_cache_dir",
    "request_key",
    "require_dspy",
    "JudgesUnavailable",
    "make_lm",
    "JudgeServerError",
    "JudgeServerUnreachable",
    "JudgeServerTimeout",
    "JudgeServerHTTPError",
]

_SECRET_PARAMS = {"api_key", "api_token", "azure_ad_token"}
# How a request travels, not what it asks: left out of the cache key so that a longer time-out or more
# retries still find the answers cached before.
_TRANSPORT_PARAMS = {"timeout", "request_timeout", "num_retries"}


def require_dspy():
    """Import and return :mod:`dspy`, or raise :class:`JudgesUnavailable` saying how to install it."""
    try:
        import dspy
    except ImportError as exc:
        raise JudgesUnavailable(
            "LLM judges", "dspy", "judges", "dspy", f"{exc}; or induce from bank metrics alone by not configuring an LM"
        ) from None
    return dspy


def default_cache_dir() -> Path:
    """``$NLGEVAL_LLM_CACHE`` or the user cache directory of pytest-nlgeval, sub-folder ``llm``."""
    env = os.environ.get("NLGEVAL_LLM_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pytest-nlgeval")) / "llm"


@dataclass
class LLMUsage:
    """Counts of one cached LM: model calls, cache hits and the tokens the model reported."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_call(self, usage: dict | None) -> None:
        with self._lock:
            self.calls += 1
            usage = usage or {}
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)

    def add_hit(self) -> None:
        with self._lock:
            self.cache_hits += 1

    def to_dict(self) -> dict:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    def summary(self) -> str:
        return (
            f"{self.calls + self.cache_hits} LLM calls ({self.cache_hits} from cache), "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens"
        )


def lm_identity(lm) -> dict:
    """The model id and request parameters of an LM, without secrets (stored in artifacts and cache keys)."""
    params = {
        k: v
        for k, v in dict(getattr(lm, "kwargs", {}) or {}).items()
        if k not in _SECRET_PARAMS and k not in _TRANSPORT_PARAMS and v is not None
    }
    return {
        "model": str(getattr(lm, "model", type(lm).__name__)),
        "model_type": str(getattr(lm, "model_type", "chat")),
        "params": _jsonable(params),
    }


def request_key(identity: dict, params: dict, prompt, messages) -> str:
    """SHA-256 of the canonical JSON of model id, merged parameters and the full prompt/messages."""
    merged = dict(identity.get("params") or {})
    merged.update({k: v for k, v in params.items() if k not in _SECRET_PARAMS and k not in _TRANSPORT_PARAMS})
    payload = {
        "model": identity["model"],
        "model_type": identity.get("model_type", "chat"),
        "params": _jsonable(merged),
        "prompt": prompt,
        "messages": _jsonable(messages),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _jsonable(value):
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _plain_logprobs(value):
    """Log-probabilities as plain JSON (the client returns pydantic objects)."""

    def plain(obj):
        if hasattr(obj, "model_dump") and not isinstance(obj, type):
            return obj.model_dump()
        return str(obj)

    if hasattr(value, "model_dump") and not isinstance(value, type):
        value = value.model_dump()
    return json.loads(json.dumps(value, default=plain))


class _DiskStore:
    """One JSON file per key under ``root/ab/abcdef....json``; written atomically (safe under xdist)."""

    def __init__(self, root: Path | None) -> None:
        self.root = None if root is None else Path(root)  # None: reads nothing, writes nothing

    def _path(self, key: str) -> Path:
        if self.root is None:
            raise RuntimeError("a store without a folder has no paths")  # callers check self.root first
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str):
        if self.root is None:
            return None
        path = self._path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def forget(self, key: str) -> None:
        """Remove the entry of ``key`` (an answer that must be asked again), if there is one."""
        if self.root is None:
            return
        try:
            self._path(key).unlink()
        except FileNotFoundError:
            pass

    def set_aside(self, key: str) -> Path | None:
        """Rename the entry of ``key`` to ``<key>.corrupt-<time>-<pid>`` (kept for inspection, never read)."""
        if self.root is None:
            return None
        path = self._path(key)
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{os.getpid()}")
        try:
            os.replace(path, aside)
        except OSError:
            return None
        return aside

    def put(self, key: str, entry: dict) -> None:
        if self.root is None:
            return
        path = self._path(key)
        try:
            blob = json.dumps(entry, ensure_ascii=False)
        except (TypeError, ValueError):
            return  # outputs that are not plain JSON (tool objects) are not cached
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(blob)
        os.replace(tmp, path)


def _well_formed(entry) -> bool:
    """Whether ``entry`` is what :class:`CachedLM` writes: ``{"outputs": [text or {"text": ...}, ...]}``."""
    outputs = entry.get("outputs") if isinstance(entry, dict) else None
    return isinstance(outputs, list) and all(
        isinstance(o, str) or (isinstance(o, dict) and isinstance(o.get("text", ""), str)) for o in outputs
    )


_CLASS = None


def _plain(value):
    """Log-probability objects of the LLM client as plain JSON data."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    elif hasattr(value, "to_dict") and not isinstance(value, dict):
        value = value.to_dict()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _over_scale(position: dict, scale: tuple[int, int]) -> tuple[float, dict[str, float], float] | None:
    """The distribution over the scale's digit tokens among one position's top log-probabilities:
    ``(probability-weighted score, distribution normalised to 1, probability mass on the scale)``, or None
    when no alternative is a digit of the scale. Log-probabilities that are not finite numbers <= 0 (a
    string that is no number, 1000, NaN) are not probabilities and are skipped."""
    lo, hi = scale
    alternatives = position.get("top_logprobs") or [
        {"token": position.get("token"), "logprob": position.get("logprob")}
    ]
    probs: dict[int, float] = {}
    for alt in alternatives:
        token = str(alt.get("token") or "").strip()
        try:
            logprob = float(alt.get("logprob"))
        except (TypeError, ValueError):
            continue
        if not token.isdigit() or not math.isfinite(logprob) or logprob > 0:
            continue
        if lo <= int(token) <= hi:
            probs[int(token)] = probs.get(int(token), 0.0) + math.exp(logprob)
    mass = sum(probs.values())
    if mass <= 0.0:
        return None
    value = sum(k * p for k, p in probs.items()) / mass
    return value, {str(k): probs[k] / mass for k in sorted(probs)}, mass


#: decoding steps read for the scale's distribution (a first token may be a space or a line break)
SCALE_TOKENS = 2


def scale_distribution(logprobs, scale: tuple[int, int]) -> tuple[float, dict[str, float], float] | None:
    """The judge's distribution over the scale at the first generated position whose top log-probabilities
    hold any of the scale's digits: ``(probability-weighted score, distribution normalised to 1, probability
    mass on the scale's tokens)``, or None (no usable log-probabilities, or a scale of more than one digit).

        >>> lp = {"content": [{"token": "4", "logprob": -0.2, "top_logprobs": [
        ...     {"token": "4", "logprob": -0.2}, {"token": "5", "logprob": -1.8}, {"token": " The", "logprob": -3}]}]}
        >>> round(scale_distribution(lp, (1, 5))[0], 3)
        4.168
    """
    lo, hi = scale
    if lo < 0 or hi > 9:
        return None
    content = (_plain(logprobs) or {}).get("content") if logprobs else None
    for position in content or []:
        read = _over_scale(position, scale)
        if read is not None:
            return read
    return None


#: the largest /completions body read: one token's top log-probabilities fit in a few kilobytes
COMPLETION_BODY_LIMIT = 1_000_000


def completion_logprobs(answer) -> dict | None:
    """A completions answer's log-probabilities in the chat form (``{"content": [{"token", "top_logprobs":
    [{"token", "logprob"}]}]}``), from OpenAI's legacy ``{"top_logprobs": [{token: logprob}]}`` or a
    ``content`` list; None when the answer holds no digit among its alternatives (nothing a scale can read)."""
    try:
        logprobs = answer["choices"][0].get("logprobs") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    if isinstance(logprobs.get("content"), list):
        content = logprobs["content"]
    else:
        tops = logprobs.get("top_logprobs") or []
        tokens = logprobs.get("tokens") or [""] * len(tops)
        content = []
        for token, top in zip(tokens, tops):
            if not isinstance(top, dict):
                return None
            content.append({"token": token, "top_logprobs": [{"token": t, "logprob": v} for t, v in top.items()]})
    for position in content[:2]:  # a first token may be a space or a line break
        if not isinstance(position, dict):
            return None
        for alt in position.get("top_logprobs") or [position]:
            if isinstance(alt, dict) and str(alt.get("token") or "").strip().isdigit():
                try:
                    logprob = float(alt["logprob"])
                except (KeyError, TypeError, ValueError):
                    continue
                if math.isfinite(logprob) and logprob <= 0:  # a probability, not 1000 or NaN
                    return {"content": content}
    return None


def complete_next_token(lm, prompt: str, top: int = 20, *, identity: dict | None = None) -> dict | None:
    """Top ``top`` log-probabilities of the one token after ``prompt``, from the completions endpoint of the
    OpenAI-compatible server behind ``lm`` (a :func:`cached_lm`, or a ``dspy.LM`` with an ``api_base``), in
    the chat form of :func:`completion_logprobs`. None when the LM is a hosted API (no ``api_base``), the
    server has no completions endpoint, or its answer holds no digit. Cached on disk with the chat answers
    (only answers that hold a distribution over some digits); server failures are the named
    :class:`JudgeServerError` subclasses."""

    import json as _json
    import socket
    import urllib.error
    import urllib.request

    identity = getattr(lm, "identity", None) or identity or lm_identity(getattr(lm, "inner", lm))
    inner_kwargs = dict(getattr(getattr(lm, "inner", lm), "kwargs", {}) or {})
    api_base = inner_kwargs.get("api_base")
    if not api_base:
        return None  # a hosted API: no raw completions to ask
    params = {"endpoint": "completions", "max_tokens": 1, "temperature": 0.0, "logprobs": top}
    key = request_key(identity, params, prompt, None)
    store = getattr(lm, "store", None)
    usage = getattr(lm, "usage", None)
    entry = store.get(key) if store is not None else None
    if isinstance(entry, dict) and isinstance(entry.get("logprobs"), dict):
        if usage is not None:
            usage.add_hit()
        return entry["logprobs"]
    model = str(identity["model"]).split("/", 1)[-1]
    body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "logprobs": top}
    request = urllib.request.Request(
        api_base.rstrip("/") + "/completions",
        data=_json.dumps(body).encode("utf-8"),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {inner_kwargs.get('api_key', 'no-key')}",
        },
    )
    timeout = float(inner_kwargs.get("timeout") or 60.0)
    advice = getattr(lm, "advice", None) or {}
    model_id = identity["model"]
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(COMPLETION_BODY_LIMIT + 1)
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 405, 501):
            return None  # no completions endpoint: the answer form it is
        raise JudgeServerHTTPError(model_id, api_base, f"HTTP {exc.code} from /completions", status=exc.code) from None
    except (socket.timeout, TimeoutError):
        raise JudgeServerTimeout(
            model_id, api_base, f"no answer within {timeout:g} s", advice=advice.get(JudgeServerTimeout)
        ) from None
    except (urllib.error.URLError, ConnectionError) as exc:
        raise JudgeServerUnreachable(
            model_id, api_base, f"/completions: {exc}", advice=advice.get(JudgeServerUnreachable)
        ) from None
    try:
        if len(body) > COMPLETION_BODY_LIMIT:
            raise ValueError(f"longer than {COMPLETION_BODY_LIMIT:,} bytes")
        answer = _json.loads(body)
    except ValueError as exc:  # also UnicodeDecodeError
        raise JudgeServerHTTPError(
            model_id, api_base, f"/completions answered with a body that is not an OpenAI completion ({exc})"
        ) from None
    if usage is not None:
        usage.add_call(answer.get("usage") if isinstance(answer, dict) else None)
    logprobs = completion_logprobs(answer)
    if logprobs is not None and store is not None:
        store.put(key, {"logprobs": logprobs})
    return logprobs


class AnswerCache:
    """An LM that answers from the disk cache and otherwise asks the wrapped LM (a ``dspy.LM`` or the
    project's own :class:`~pytest_nlgeval.llm.client.OpenAIClient`), counting calls and hits. For a DSPy LM
    the wrapper is a ``dspy.BaseLM`` too (:func:`cached_lm` picks), so DSPy programs can use it."""

    def __init__(self, inner, cache_dir: Path | Literal[False], usage: LLMUsage | None = None) -> None:
        self._setup(inner, cache_dir, usage)

    def _setup(self, inner, cache_dir: Path | Literal[False], usage: LLMUsage | None) -> None:
        ident = lm_identity(inner)
        self.model, self.model_type = ident["model"], ident["model_type"]
        self.kwargs = dict(getattr(inner, "kwargs", {}) or {})
        self.inner = inner
        self.identity = ident
        self.cache_dir = None if cache_dir is False else Path(cache_dir)
        self.store = _DiskStore(self.cache_dir)
        self.usage = usage or LLMUsage()
        self.api_base = (getattr(inner, "kwargs", {}) or {}).get("api_base")
        #: the first server failure; later calls that miss the cache fail at once with it, so a down or
        #: stalled server costs one time-out per thread instead of one per row
        self.server_error: JudgeServerError | None = None
        #: error class -> the advice its message gives (the pytest plugin names its own options)
        self.advice: dict[type, str] = {}

    def _failed(self, exc: Exception):
        error = _server_error(exc, self.identity["model"], self.api_base, self.advice)
        if error is None:
            return None
        self.server_error = self.server_error or error
        return error

    def _request(self, kwargs: dict) -> dict:
        # Parameters changed on this wrapper (e.g. by dspy's lm.copy(temperature=...)) travel with the call.
        base = dict(getattr(self.inner, "kwargs", {}) or {})
        extra = {k: v for k, v in self.kwargs.items() if base.get(k) != v}
        return {**extra, **kwargs}

    def _lookup(self, prompt, messages, call_kwargs):
        key = request_key(self.identity, call_kwargs, prompt, messages)
        entry = self.store.get(key)
        if entry is not None and not _well_formed(entry):
            # an entry this cache never writes (edited, truncated, from another tool): set aside with one
            # warning and asked again, as the score cache does with a corrupt file
            aside = self.store.set_aside(key)
            warnings.warn(
                f"the LLM answer cache entry {self.store._path(key)} is not an answer this cache writes "
                f"(a JSON object with a list of 'outputs'); set aside as {aside} and asked again",
                CacheWarning,
                stacklevel=3,
            )
            entry = None
        return key, entry

    def forget(self, prompt=None, *, messages=None, **kwargs) -> None:
        """Drop the cached answer of this request (an answer the caller cannot use is asked again)."""
        key = request_key(self.identity, self._request(kwargs), prompt, messages)
        self.store.forget(key)

    def _remember(self, key: str, outputs, before: int) -> list:
        history = getattr(self.inner, "history", None) or []
        usage = history[-1].get("usage") if len(history) > before else None
        self.usage.add_call(usage)
        # Log-probabilities arrive as the client's objects: stored (and returned) as plain JSON, so an
        # answer from the cache is the same data as the answer that was cached.
        outputs = [
            {**o, "logprobs": _plain_logprobs(o["logprobs"])}
            if isinstance(o, dict) and o.get("logprobs") is not None
            else o
            for o in outputs
        ]
        self.store.put(
            key, {"model": self.identity["model"], "outputs": list(outputs), "usage": _jsonable(usage or {})}
        )
        return list(outputs)

    def _begin(self, prompt, messages, kwargs) -> tuple[str, dict, list | None, int]:
        """``(cache key, request parameters, the cached answer or None, length of the LM's history)``; a miss
        after a server failure of this run raises that failure at once."""
        call_kwargs = self._request(kwargs)
        key, entry = self._lookup(prompt, messages, call_kwargs)
        if entry is not None:
            self.usage.add_hit()
            return key, call_kwargs, list(entry["outputs"]), 0
        if self.server_error is not None:
            raise self.server_error
        return key, call_kwargs, None, len(getattr(self.inner, "history", None) or [])

    def _reraise(self, exc: Exception):
        error = self._failed(exc)
        if error is None:
            raise exc
        # the named error says what failed and what to do; the chain through the HTTP client, LiteLLM and
        # DSPy says nothing more (kept as .original for a debugger)
        error.original = exc
        raise error from None

    def __call__(self, prompt=None, *, messages=None, **kwargs):
        key, call_kwargs, cached, before = self._begin(prompt, messages, kwargs)
        if cached is not None:
            return cached
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # messages= is DSPy 3.4's adapter path
                outputs = self.inner(prompt, messages=messages, **call_kwargs)
        except Exception as exc:
            self._reraise(exc)
        return self._remember(key, outputs, before)

    async def acall(self, prompt=None, *, messages=None, **kwargs):
        key, call_kwargs, cached, before = self._begin(prompt, messages, kwargs)
        if cached is not None:
            return cached
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                outputs = await self.inner.acall(prompt, messages=messages, **call_kwargs)
        except Exception as exc:
            self._reraise(exc)
        return self._remember(key, outputs, before)


def _cached_lm_class():
    """The cache wrapper that is also a ``dspy.BaseLM`` (imports DSPy)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    require_dspy()
    from dspy.clients.base_lm import BaseLM

    class CachedLM(AnswerCache, BaseLM):
        """A ``dspy.BaseLM`` that answers from the disk cache and otherwise asks the wrapped LM."""

        def __init__(self, inner, cache_dir: Path | Literal[False], usage: LLMUsage | None = None) -> None:
            ident = lm_identity(inner)
            BaseLM.__init__(self, model=ident["model"], model_type=ident["model_type"], cache=False)
            self._setup(inner, cache_dir, usage)

        def forward(self, prompt=None, messages=None, **kwargs):  # pragma: no cover - __call__ is overridden
            raise NotImplementedError("CachedLM is called through __call__/acall")

    _CLASS = CachedLM
    return CachedLM


def cached_lm(lm, cache_dir: str | Path | Literal[False] | None = None, usage: LLMUsage | None = None):
    """Wrap ``lm`` (any ``dspy.BaseLM``, including ``dspy.utils.DummyLM``) with the disk cache.

    An LM that is already wrapped is returned as is. ``cache_dir`` defaults to :func:`default_cache_dir`;
    ``False`` reads and writes no cache (the calls are still counted).
    """
    from pytest_nlgeval.llm.client import OpenAIClient

    if isinstance(lm, AnswerCache):
        return lm
    # the project's own client needs no DSPy; any other LM is a dspy.BaseLM, and so is its wrapper
    cls = AnswerCache if isinstance(lm, OpenAIClient) else _cached_lm_class()
    if cache_dir is False:
        return cls(lm, False, usage)
    return cls(lm, Path(cache_dir) if cache_dir is not None else default_cache_dir(), usage)


ENGINES = ("litellm", "auto", "lm15")


def make_lm(
    model: str,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 1000,
    cache_dir: str | Path | Literal[False] | None = None,
    timeout: float | None = 120.0,
    num_retries: int = 2,
    engine: str = "litellm",
    **params,
):
    """Build a cached ``dspy.LM`` for any LiteLLM model id (``openai/<model>`` with ``api_base`` for an
    OpenAI-compatible server such as vLLM or llama.cpp; ``ollama_chat/<model>``).

    DSPy's own response cache is turned off so that this cache, whose key includes every parameter,
    is the only one. ``timeout`` (seconds per request) and ``num_retries`` (DSPy's retries with backoff
    of failed requests) bound how long a down or stalled server can hold a run; its failures surface as
    :class:`JudgeServerError`. ``engine`` is DSPy's request engine: ``litellm`` (default), or DSPy's own
    ``lm15``/``auto``.
    """
    # LiteLLM otherwise downloads its model price list when it is imported, which stalls offline for seconds.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    dspy = require_dspy()
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    kwargs = dict(params)
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        # Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) ignore the key, but the client refuses to
        # send a request without one.
        kwargs["api_key"] = "no-key"
    if timeout is not None:
        kwargs["timeout"] = float(timeout)
    lm = dspy.LM(
        model,
        temperature=temperature,
        max_tokens=max_tokens,
        cache=False,
        num_retries=int(num_retries),
        engine=engine,
        **kwargs,
    )
    return cached_lm(lm, cache_dir)
