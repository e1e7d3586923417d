"""A disk cache in front of any ``dspy.LM``, keyed by everything that determines the answer.

The key is the SHA-256 of the canonical JSON of: the model id, the model type, every request parameter
(the LM's defaults merged with the call's, e.g. temperature, max_tokens, api_base, rollout_id; the API key
is left out because it does not change the answer and must not be written to disk) and the full prompt
or message list. Keying on the model name alone (a defect of the reference toolkit) would hand a
temperature-0.0 answer to a temperature-1.0 request, or one server's answer to another's.

Calls that reach the model and calls answered from the cache are counted, with the tokens the model
reported, so the command line and the report can show what an induction cost.

Only answers that were read successfully are cached: an answer with no choice or with log-probabilities
that are not in OpenAI's form is a :class:`JudgeServerAnswerError` and leaves nothing on disk. A cache file
that is not such an answer (truncated, binary, edited by hand) is set aside as ``<file>.corrupt-<time>-<pid>``
with a :class:`CacheWarning` and the request is asked again; a folder that cannot be written (read-only, full)
warns once and keeps the run's answers in memory.

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
from typing import Any, Literal

from pytest_nlgeval.core.cache import CacheWarning
from pytest_nlgeval.llm.client import _answer_error, _Shape, logprobs_problem, post_json, read_usage
from pytest_nlgeval.llm.secrets import Secret, public_params, public_url, warn_if_key_in_clear_text
from pytest_nlgeval.llm.errors import (
    JudgeServerAnswerError,
    JudgeServerAnswerTooLarge,
    JudgeServerError,
    JudgeServerHTTPError,
    JudgeServerRateLimited,
    JudgeServerRedirect,
    JudgeServerTimeout,
    JudgeServerUnreachable,
    JudgesUnavailable,
    _server_error,
)

__all__ = [
    "CacheWarning",
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
    "JudgeServerAnswerError",
    "JudgeServerAnswerTooLarge",
    "JudgeServerRedirect",
    "JudgeServerRateLimited",
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
        """Count one request that reached the model, with the tokens of its ``usage`` (counts that are not
        non-negative whole numbers count as 0)."""
        usage = usage if isinstance(usage, dict) else {}
        with self._lock:
            self.calls += 1
            self.prompt_tokens += _count(usage.get("prompt_tokens"))
            self.completion_tokens += _count(usage.get("completion_tokens"))

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


def _count(value) -> int:
    try:
        number = int(value or 0)
    except (TypeError, ValueError, OverflowError):  # a string, NaN, 1e400
        return 0
    return max(number, 0)


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
        "params": _jsonable(public_params(params)),  # the API base without user:password@ or query string
    }


def request_key(identity: dict, params: dict, prompt, messages) -> str:
    """SHA-256 of the canonical JSON of model id, merged parameters and the full prompt/messages."""
    merged = dict(identity.get("params") or {})
    merged.update(
        public_params({k: v for k, v in params.items() if k not in _SECRET_PARAMS and k not in _TRANSPORT_PARAMS})
    )
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


class _Unreadable:
    """What :meth:`_DiskStore.get` returns for a file that is not JSON (truncated, binary)."""

    def __repr__(self) -> str:
        return "<unreadable cache entry>"


UNREADABLE = _Unreadable()


def _describe(exc: OSError) -> str:
    return f"{type(exc).__name__}: {exc.strerror or exc}" if exc.strerror else f"{type(exc).__name__}: {exc}"


class _DiskStore:
    """One JSON file per key under ``root/ab/abcdef....json``; written atomically (safe under xdist).

    A folder that cannot be written (read-only, full, a file in the way) warns once with a
    :class:`CacheWarning` and keeps this run's answers in memory, as the score cache does: the checks are
    still judged. A file that is not JSON is returned as :data:`UNREADABLE` for the caller to set aside."""

    def __init__(self, root: Path | None) -> None:
        self.root = None if root is None else Path(root)  # None: reads nothing, writes nothing
        self._lock = threading.Lock()
        #: answers of this run that the folder could not take
        self._memory: dict[str, dict] = {}
        #: keys whose file must not be read again this run (forgotten, or set aside without success)
        self._dropped: set[str] = set()
        #: why the folder is not written this run (None: it is); warned once
        self.failed: str | None = None
        self._unread_warned = False

    def _path(self, key: str) -> Path:
        if self.root is None:
            raise RuntimeError("a store without a folder has no paths")  # callers check self.root first
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str):
        """The entry of ``key``; None when there is none; :data:`UNREADABLE` when its file is not JSON."""
        if self.root is None:
            return None
        with self._lock:
            if key in self._memory:
                return self._memory[key]
            if key in self._dropped:
                return None
        try:
            blob = self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if not self._unread_warned:
                self._unread_warned = True
                warnings.warn(
                    f"the LLM answer cache {str(self.root)!r} cannot be read ({_describe(exc)}); its answers are "
                    "asked again",
                    CacheWarning,
                    stacklevel=4,
                )
            return None
        try:
            return json.loads(blob.decode("utf-8"))
        except (ValueError, RecursionError):  # also UnicodeDecodeError: a binary file
            return UNREADABLE

    def forget(self, key: str) -> None:
        """Remove the entry of ``key`` (an answer that must be asked again), if there is one."""
        if self.root is None:
            return
        with self._lock:
            self._memory.pop(key, None)
            self._dropped.add(key)
        try:
            self._path(key).unlink()
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as exc:
            self._cannot_write(exc)

    def set_aside(self, key: str) -> Path | str | None:
        """Rename the entry of ``key`` to ``<key>.corrupt-<time>-<pid>`` (kept for inspection, never read):
        the new path, or why it could not be renamed (it is then not read again this run)."""
        if self.root is None:
            return None
        path = self._path(key)
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{os.getpid()}")
        with self._lock:
            self._memory.pop(key, None)
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return "another process set it aside first"
        except OSError as exc:
            with self._lock:
                self._dropped.add(key)
            return _describe(exc)
        with self._lock:
            self._dropped.discard(key)
        return aside

    def put(self, key: str, entry: dict) -> None:
        if self.root is None:
            return
        try:
            blob = json.dumps(entry, ensure_ascii=False)
        except (TypeError, ValueError):
            return  # outputs that are not plain JSON (tool objects) are not cached
        with self._lock:
            self._dropped.discard(key)
            in_memory = self.failed is not None
            if in_memory:
                self._memory[key] = json.loads(blob)
        if in_memory:
            return
        try:
            self._write(self._path(key), blob)
        except OSError as exc:
            with self._lock:
                self._memory[key] = json.loads(blob)
            self._cannot_write(exc)

    def _write(self, path: Path, blob: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(blob)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _cannot_write(self, exc: OSError) -> None:
        """Stop writing the folder for the rest of the run; warn once. The folder is left as it is."""
        with self._lock:
            first = self.failed is None
            self.failed = _describe(exc)
        if first:
            warnings.warn(
                f"the LLM answer cache {str(self.root)!r} cannot be written ({self.failed}); this run keeps its "
                "answers in memory and the checks are still judged, the folder is left as it is",
                CacheWarning,
                stacklevel=4,
            )


def _outputs_problem(outputs, where: str = "outputs") -> tuple[str, str] | None:
    """``(field, what is wrong)`` when ``outputs`` are not answers this cache keeps (a non-empty list of
    texts or ``{"text": str or None, "logprobs": OpenAI's form}``); None when they are."""
    if not isinstance(outputs, list):
        return where, "is not a list"
    if not outputs:
        return where, "is an empty list: no answer"
    for i, output in enumerate(outputs):
        if isinstance(output, str):
            continue
        if not isinstance(output, dict):
            return f"{where}[{i}]", "is neither a text nor an object"
        text = output.get("text")
        if text is not None and not isinstance(text, str):  # None: no content (a tool call), read as ""
            return f"{where}[{i}].text", "is not a string"
        problem = logprobs_problem(output.get("logprobs"), f"{where}[{i}].logprobs")
        if problem is not None:
            return problem
    return None


def _entry_problem(entry) -> str | None:
    """What makes ``entry`` something :class:`AnswerCache` never writes; None when it is one."""
    if not isinstance(entry, dict):
        return "the entry is not a JSON object"
    problem = _outputs_problem(entry.get("outputs"))
    return None if problem is None else " ".join(problem)


def _well_formed(entry) -> bool:
    """Whether ``entry`` is what :class:`AnswerCache` writes: ``{"outputs": [text or {"text": ..., "logprobs":
    ...}, ...]}`` with at least one answer and log-probabilities in OpenAI's form."""
    return _entry_problem(entry) is None


def _set_aside_with_warning(store: _DiskStore, key: str, problem: str) -> None:
    """Move an entry that cannot be read out of the way, with one :class:`CacheWarning` naming it."""
    aside = store.set_aside(key)
    where = f"set aside as {aside}" if isinstance(aside, Path) else f"left in place ({aside}), not read again"
    warnings.warn(
        f"the LLM answer cache entry {store._path(key)} is not an answer this cache writes ({problem}); "
        f"{where}, and the request is asked again",
        CacheWarning,
        stacklevel=4,
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
    if not isinstance(position, dict):
        return None
    alternatives = position.get("top_logprobs") or [
        {"token": position.get("token"), "logprob": position.get("logprob")}
    ]
    if not isinstance(alternatives, list):
        return None
    probs: dict[int, float] = {}
    for alt in alternatives:
        if not isinstance(alt, dict):
            continue
        token = str(alt.get("token") or "").strip()
        raw: Any = alt.get("logprob")
        try:
            logprob = float(raw)
        except (TypeError, ValueError):
            continue
        if not (token.isascii() and token.isdigit()) or not math.isfinite(logprob) or logprob > 0:
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
    plain = _plain(logprobs) if logprobs else None
    content = plain.get("content") if isinstance(plain, dict) else None
    for position in content if isinstance(content, list) else []:
        read = _over_scale(position, scale)
        if read is not None:
            return read
    return None


#: the largest /completions body read: one token's top log-probabilities fit in a few kilobytes
COMPLETION_BODY_LIMIT = 1_000_000


def completion_logprobs(answer) -> dict | None:
    """A completions answer's log-probabilities in the chat form (``{"content": [{"token", "top_logprobs":
    [{"token", "logprob"}]}]}``), from OpenAI's legacy ``{"top_logprobs": [{token: logprob}]}`` or a
    ``content`` list; None when the answer holds no digit among its alternatives (nothing a scale can read)
    or is not of either form."""
    try:
        logprobs = answer["choices"][0].get("logprobs") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    if not isinstance(logprobs, dict):
        return None
    if isinstance(logprobs.get("content"), list):
        content = logprobs["content"]
        if logprobs_problem({"content": content}) is not None:
            return None
    else:
        tops = logprobs.get("top_logprobs") or []
        tokens = logprobs.get("tokens") or [""] * len(tops)
        if not isinstance(tops, list) or not isinstance(tokens, list):
            return None
        content = []
        for token, top in zip(tokens, tops):
            if not isinstance(top, dict):
                return None
            content.append(
                {"token": str(token), "top_logprobs": [{"token": str(t), "logprob": v} for t, v in top.items()]}
            )
    for position in content[:2]:  # a first token may be a space or a line break
        for alt in position.get("top_logprobs") or [position]:
            if str(alt.get("token") or "").strip().isdigit():
                try:
                    logprob = float(alt["logprob"])
                except (KeyError, TypeError, ValueError):
                    continue
                if math.isfinite(logprob) and logprob <= 0:  # a probability, not 1000 or NaN
                    return {"content": content}
    return None


def _completion_problem(answer) -> tuple[str, str] | None:
    """``(field, what is wrong)`` when a completions answer is not of OpenAI's form where the project reads
    it (the first choice's log-probabilities, ``usage``); None when it is."""
    if not isinstance(answer, dict):
        return "body", "is not a JSON object"
    choices = answer.get("choices")
    if not isinstance(choices, list):
        return "choices", "is not a list of answers"
    if not choices:
        return "choices", "is an empty list: the server gave no answer"
    if not isinstance(choices[0], dict):
        return "choices[0]", "is not an object"
    logprobs = choices[0].get("logprobs")
    if logprobs is None:
        return None
    if not isinstance(logprobs, dict):
        return "choices[0].logprobs", "is not an object"
    if logprobs.get("content") is not None:
        return logprobs_problem(logprobs, "choices[0].logprobs")
    for name in ("tokens", "top_logprobs"):
        if logprobs.get(name) is not None and not isinstance(logprobs[name], list):
            return f"choices[0].logprobs.{name}", "is not a list"
    for i, top in enumerate(logprobs.get("top_logprobs") or []):
        if top is not None and not isinstance(top, dict):
            return f"choices[0].logprobs.top_logprobs[{i}]", "is not an object of token: log-probability"
    return None


def _completion_entry_problem(entry) -> str | None:
    """What makes a cached completions entry something :func:`complete_next_token` never writes."""
    if not isinstance(entry, dict) or not isinstance(entry.get("logprobs"), dict):
        return "not an object with the 'logprobs' of a completion"
    if not isinstance(entry["logprobs"].get("content"), list):
        return "logprobs.content is not a list"
    problem = logprobs_problem(entry["logprobs"])
    return None if problem is None else " ".join(problem)


def complete_next_token(lm, prompt: str, top: int = 20, *, identity: dict | None = None) -> dict | None:
    """Top ``top`` log-probabilities of the one token after ``prompt``, from the completions endpoint of the
    OpenAI-compatible server behind ``lm`` (a :func:`cached_lm`, or a ``dspy.LM`` with an ``api_base``), in
    the chat form of :func:`completion_logprobs`. None when the LM is a hosted API (no ``api_base``), the
    server has no completions endpoint, or its answer holds no digit. Cached on disk with the chat answers
    (only answers that hold a distribution over some digits); server failures, answers of the wrong shape
    included, are the named :class:`JudgeServerError` subclasses. The request follows the trust rules of
    :func:`pytest_nlgeval.llm.client.post_json`."""
    identity = getattr(lm, "identity", None) or identity or lm_identity(getattr(lm, "inner", lm))
    inner_kwargs = dict(getattr(getattr(lm, "inner", lm), "kwargs", {}) or {})
    api_base = inner_kwargs.get("api_base")
    if not api_base:
        return None  # a hosted API: no raw completions to ask
    api_base = str(api_base).rstrip("/")
    params = {"endpoint": "completions", "max_tokens": 1, "temperature": 0.0, "logprobs": top}
    key = request_key(identity, params, prompt, None)
    store = getattr(lm, "store", None)
    usage = getattr(lm, "usage", None)
    entry = store.get(key) if store is not None else None
    if entry is not None and store is not None:
        unusable = "the file is not JSON" if entry is UNREADABLE else _completion_entry_problem(entry)
        if unusable is not None:
            _set_aside_with_warning(store, key, unusable)
            entry = None
    if entry is not None:
        if usage is not None:
            usage.add_hit()
        return entry["logprobs"]
    model = str(identity["model"]).split("/", 1)[-1]
    body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "logprobs": top}
    timeout = float(inner_kwargs.get("timeout") or 60.0)
    model_id = identity["model"]
    try:
        answer = post_json(
            api_base + "/completions",
            body,
            api_key=inner_kwargs.get("api_key"),
            timeout=timeout,
            model=model_id,
            api_base=api_base,
            limit=COMPLETION_BODY_LIMIT,
            advice=getattr(lm, "advice", None) or {},
        )
    except JudgeServerHTTPError as exc:
        if type(exc) is JudgeServerHTTPError and exc.status in (404, 405, 501):
            return None  # no completions endpoint: the answer form it is
        raise
    try:
        problem = _completion_problem(answer)
        if problem is not None:
            raise _Shape(*problem)
        counts = read_usage(answer.get("usage"))
    except _Shape as exc:
        raise _answer_error(model_id, api_base, "/completions", exc) from None
    if usage is not None:
        usage.add_call(counts)
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
        self.api_base = public_url((getattr(inner, "kwargs", {}) or {}).get("api_base"))
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
        if entry is not None:
            # an entry this cache never writes (edited by hand, truncated, binary, from another tool): set
            # aside with one warning and asked again, as the score cache does with a corrupt file
            problem = "the file is not JSON" if entry is UNREADABLE else _entry_problem(entry)
            if problem is not None:
                _set_aside_with_warning(self.store, key, problem)
                entry = None
        return key, entry

    def forget(self, prompt=None, *, messages=None, **kwargs) -> None:
        """Drop the cached answer of this request (an answer the caller cannot use is asked again)."""
        key = request_key(self.identity, self._request(kwargs), prompt, messages)
        self.store.forget(key)

    def _readable(self, outputs) -> list:
        """The LM's outputs as plain JSON, or :class:`JudgeServerAnswerError` naming the field when they are
        not answers this cache keeps (no answer, log-probabilities of the wrong shape): nothing unreadable
        is cached."""
        if not isinstance(outputs, list):
            outputs = list(outputs) if isinstance(outputs, tuple) else outputs
        # Log-probabilities arrive as the client's objects: stored (and returned) as plain JSON, so an
        # answer from the cache is the same data as the answer that was cached.
        if isinstance(outputs, list):
            outputs = [
                {**o, "logprobs": _plain_logprobs(o["logprobs"])}
                if isinstance(o, dict) and o.get("logprobs") is not None
                else o
                for o in outputs
            ]
        problem = _outputs_problem(outputs, "choices")
        if problem is not None:
            field, what = problem
            raise JudgeServerAnswerError(
                self.identity["model"], self.api_base, f"the answer has {field} that {what}", field=field
            )
        return outputs

    def _remember(self, key: str, outputs: list, before: int) -> list:
        history = getattr(self.inner, "history", None) or []
        usage = history[-1].get("usage") if len(history) > before else None
        self.usage.add_call(usage)
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
            outputs = self._readable(outputs)
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
            outputs = self._readable(outputs)
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
        kwargs["api_key"] = Secret(api_key)
    elif api_base and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        # Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) ignore the key, but the client refuses to
        # send a request without one.
        kwargs["api_key"] = "no-key"
    if api_base:
        warn_if_key_in_clear_text(api_base, kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY"))
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
