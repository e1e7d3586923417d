"""An OpenAI-compatible chat client on the standard library (no DSPy, no LiteLLM).

It is called the way the answer cache calls a ``dspy.LM`` (``client(messages=[...], **params)`` returns a list
of answers: the text, or ``{"text", "logprobs"}`` when log-probabilities were asked for), and it keeps the
same ``model`` and ``kwargs``, so an answer cached through either is found through the other. The request
follows OpenAI's chat completions API (``POST {api_base}/chat/completions``); ``rollout_id`` (a cache key
that tells repeated samples apart) is not sent.

    >>> client = OpenAIClient("openai/judge", api_base="http://127.0.0.1:8080/v1")      # doctest: +SKIP
    >>> client(messages=[{"role": "user", "content": "Say yes."}], max_tokens=4)        # doctest: +SKIP
    ['Yes.']

The client's trust rules (docs/judges.md, "Trust rules of the judge client"):

* the API key goes to the API base's origin (scheme, host, port) and nowhere else: a redirect to the same
  origin is followed (at most :data:`MAX_REDIRECTS`, the request sent again as it was), a redirect to any
  other origin is refused with :class:`~pytest_nlgeval.llm.errors.JudgeServerRedirect` before anything is
  sent there;
* the time-out is a deadline over the whole call (connecting, sending, the answer's headers and body, the
  waits between retries), checked between reads and enforced by closing the socket when it passes, so a
  server that drips its answer one byte at a time cannot stretch it;
* HTTP 429 and 503 are asked again at most :data:`MAX_RETRIES` times, after the server's ``Retry-After``
  (or a short back-off), and only while the wait fits in the deadline;
* at most :data:`BODY_LIMIT` bytes of an answer are read;
* the key never reaches an artifact: it is held as a :class:`~pytest_nlgeval.llm.secrets.Secret` (masked in
  tracebacks), the API base is shown without ``user:password@`` or query string, and a key about to go over
  plain http to a host that is not loopback raises a
  :class:`~pytest_nlgeval.llm.secrets.KeyInClearTextWarning` (:mod:`pytest_nlgeval.llm.secrets`);
* an answer is returned only when every field the project reads has the type OpenAI's API gives it;
  otherwise :class:`~pytest_nlgeval.llm.errors.JudgeServerAnswerError` names the field.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import math
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from typing import Any

from pytest_nlgeval.llm.errors import (
    JudgeServerAnswerError,
    JudgeServerAnswerTooLarge,
    JudgeServerError,
    JudgeServerHTTPError,
    JudgeServerRateLimited,
    JudgeServerRedirect,
    JudgeServerTimeout,
    JudgeServerUnreachable,
)
from pytest_nlgeval.llm.secrets import NO_KEY, Secret, masked, masked_bytes, public_url, warn_if_key_in_clear_text

__all__ = [
    "BODY_LIMIT",
    "MAX_REDIRECTS",
    "MAX_RETRIES",
    "RETRY_AFTER_LIMIT",
    "RETRY_STATUSES",
    "OpenAIClient",
    "logprobs_problem",
    "origin",
    "post_json",
    "read_chat_answer",
    "read_usage",
]

#: the largest answer body read (a chat answer with log-probabilities of a few hundred tokens fits easily)
BODY_LIMIT = 8_000_000
#: statuses that say "come back later": asked again after the server's Retry-After, within the time-out
RETRY_STATUSES = (429, 503)
#: the most times one request is asked again after a status of :data:`RETRY_STATUSES`
MAX_RETRIES = 3
#: the longest wait for one Retry-After when the call has no time-out (seconds)
RETRY_AFTER_LIMIT = 60.0
#: the most same-origin redirects followed for one request
MAX_REDIRECTS = 3
#: parameters that shape the cache key or the transport, never sent in the request body
_NOT_SENT = {"api_base", "api_key", "timeout", "rollout_id", "num_retries", "request_timeout"}
_REDIRECTS = (301, 302, 303, 307, 308)
_READ_SIZE = 65536


class OpenAIClient:
    """Chat requests to the OpenAI-compatible server at ``api_base`` for ``model`` (``openai/<name>``: the
    name after the provider prefix is what the server is asked for). ``api_key`` defaults to ``no-key``
    (local servers ignore it) and is sent to the API base's origin only. ``timeout`` is seconds for the whole
    call (retries and redirects included); ``None`` waits as long as the server takes."""

    model_type = "chat"

    def __init__(
        self,
        model: str,
        *,
        api_base: str,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1000,
        timeout: float | None = 60.0,
        **params: Any,
    ) -> None:
        if not api_base:
            raise ValueError("OpenAIClient needs the server's api_base, e.g. http://127.0.0.1:8080/v1")
        self.model = model
        # the keys and order of a dspy.LM's kwargs, so that the answer cache keys match
        self.kwargs: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, **params}
        self.kwargs["api_base"] = api_base
        # a key is held masked, so that no traceback, log or repr shows it (docs/judges.md, "Secrets")
        self.kwargs["api_key"] = Secret(api_key) if api_key else NO_KEY
        if timeout is not None:
            self.kwargs["timeout"] = float(timeout)
        #: one entry per request with the server's ``usage``, as a dspy.LM keeps it
        self.history: list[dict] = []

    def __repr__(self) -> str:
        return f"OpenAIClient({self.model!r}, api_base={public_url(self.kwargs['api_base'])!r})"

    def __call__(self, prompt: str | None = None, *, messages: list[dict] | None = None, **kwargs: Any) -> list:
        if messages is None:
            if prompt is None:
                raise ValueError("give the prompt or the messages")
            messages = [{"role": "user", "content": prompt}]
        merged = {**self.kwargs, **kwargs}
        api_base = str(merged["api_base"]).rstrip("/")
        body = {"model": self.model.split("/", 1)[-1], "messages": messages}
        body.update({k: v for k, v in merged.items() if k not in _NOT_SENT and v is not None})
        answer = post_json(
            api_base + "/chat/completions",
            body,
            api_key=merged.get("api_key"),
            timeout=merged.get("timeout"),
            model=self.model,
            api_base=api_base,
            limit=BODY_LIMIT,
        )
        want = bool(merged.get("logprobs"))
        outputs, usage = read_chat_answer(answer, logprobs=want, model=self.model, api_base=api_base)
        self.history.append({"usage": usage})
        return outputs


# -- reading an answer ------------------------------------------------------------------------------------


class _Shape(ValueError):
    """A field of an answer of the wrong type or value: ``field`` and what it is."""

    def __init__(self, field: str, what: str) -> None:
        super().__init__(f"{field} {what}")
        self.field, self.what = field, what


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def logprobs_problem(value: Any, where: str = "logprobs") -> tuple[str, str] | None:
    """``(field, what is wrong)`` when ``value`` is not log-probabilities in the form of OpenAI's chat API
    (``null``, or ``{"content": null or [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}``);
    None when it is. Only the structure is checked: a log-probability that is not a number is the reader's
    to skip."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return where, f"is {_kind(value)}, not an object"
    content = value.get("content")
    if content is None:
        return None
    if not isinstance(content, list):
        return f"{where}.content", f"is {_kind(content)}, not a list"
    for i, position in enumerate(content):
        field = f"{where}.content[{i}]"
        if not isinstance(position, dict):
            return field, f"is {_kind(position)}, not an object"
        token = position.get("token")
        if token is not None and not isinstance(token, str):
            return f"{field}.token", f"is {_kind(token)}, not a string"
        alternatives = position.get("top_logprobs")
        if alternatives is None:
            continue
        if not isinstance(alternatives, list):
            return f"{field}.top_logprobs", f"is {_kind(alternatives)}, not a list"
        for j, alternative in enumerate(alternatives):
            if not isinstance(alternative, dict):
                return f"{field}.top_logprobs[{j}]", f"is {_kind(alternative)}, not an object"
            token = alternative.get("token")
            if token is not None and not isinstance(token, str):
                return f"{field}.top_logprobs[{j}].token", f"is {_kind(token)}, not a string"
    return None


_USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def read_usage(usage: Any, where: str = "usage") -> dict | None:
    """The token counts of an answer's ``usage`` (``None`` when it has none); raises ``ValueError`` naming
    the field when ``usage`` is not an object or a count is not a non-negative whole number."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise _Shape(where, f"is {_kind(usage)}, not an object of token counts")
    counts = dict(usage)
    for name in _USAGE_COUNTS:
        value = usage.get(name)
        if value is None:
            continue
        whole = isinstance(value, int) and not isinstance(value, bool)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            whole, value = True, int(value)
        if not whole or value < 0:
            raise _Shape(f"{where}.{name}", f"is {_kind(value)}, not a count of tokens")
        counts[name] = value
    return counts


def read_chat_answer(
    answer: Any, *, logprobs: bool, model: str = "", api_base: str | None = None
) -> tuple[list, dict | None]:
    """``(outputs, usage)`` of a chat completion: each choice's text, or ``{"text", "logprobs"}`` when
    ``logprobs``. Raises :class:`~pytest_nlgeval.llm.errors.JudgeServerAnswerError` naming the first field of
    the wrong type: the body not an object, ``choices`` missing, empty or not a list, a choice or its
    ``message`` not an object, ``content`` neither a string nor null, ``logprobs`` not in OpenAI's form,
    ``usage`` or one of its counts of the wrong type."""
    try:
        if not isinstance(answer, dict):
            raise _Shape("body", f"is {_kind(answer)}, not a JSON object")
        choices = answer.get("choices")
        if not isinstance(choices, list):
            raise _Shape("choices", f"is {_kind(choices)}, not a list of answers")
        if not choices:
            raise _Shape("choices", "is an empty list: the server gave no answer")
        outputs: list = []
        for i, choice in enumerate(choices):
            if not isinstance(choice, dict):
                raise _Shape(f"choices[{i}]", f"is {_kind(choice)}, not an object")
            message = choice.get("message")
            if not isinstance(message, dict):
                raise _Shape(f"choices[{i}].message", f"is {_kind(message)}, not an object")
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise _Shape(f"choices[{i}].message.content", f"is {_kind(content)}, not a string")
            text = content or ""
            if logprobs:
                problem = logprobs_problem(choice.get("logprobs"), f"choices[{i}].logprobs")
                if problem is not None:
                    raise _Shape(*problem)
                outputs.append({"text": text, "logprobs": choice.get("logprobs")})
            else:
                outputs.append(text)
        usage = read_usage(answer.get("usage"))
    except _Shape as exc:
        raise _answer_error(model, api_base, "/chat/completions", exc) from None
    return outputs, usage


def _answer_error(model: str, api_base: str | None, endpoint: str, exc: _Shape) -> JudgeServerAnswerError:
    return JudgeServerAnswerError(
        model, api_base, f"{endpoint} answered with {exc.field} that {exc.what}", field=exc.field
    )


# -- the transport ----------------------------------------------------------------------------------------


def origin(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL, the port filled in; None for anything else."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80)


def _show(where: tuple[str, str, int]) -> str:
    scheme, host, port = where
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


class _Deadline:
    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.end = None if timeout is None else time.monotonic() + float(timeout)

    def left(self) -> float | None:
        return None if self.end is None else self.end - time.monotonic()

    def passed(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end


class _Expired(Exception):
    pass


class _TooLarge(Exception):
    pass


class _NoConnection(Exception):
    def __init__(self, reason: object) -> None:
        super().__init__(str(reason))
        self.reason = reason


def _connection_class(base: type) -> type:
    class Connection(base):
        """Keeps its socket after http.client hands it to the response, so that the deadline can close it."""

        kept: socket.socket | None = None

        def connect(self) -> None:
            super().connect()
            self.kept = self.sock

    return Connection


_HTTP = _connection_class(http.client.HTTPConnection)
_HTTPS = _connection_class(http.client.HTTPSConnection)


def _proxy(url: str) -> str | None:
    """The proxy that urllib would use for ``url`` (``HTTP_PROXY``/``HTTPS_PROXY``, minus ``NO_PROXY``)."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy if "://" in proxy else "http://" + proxy


def _exchange(url: str, data: bytes, headers: dict[str, str], deadline: _Deadline, limit: int):
    """One POST: ``(status, headers, body)``; raises _Expired, _TooLarge or _NoConnection."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "", parts.port
    path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    left = deadline.left()
    if left is not None and left <= 0:
        raise _Expired()
    proxy = _proxy(url)
    headers = dict(headers)
    if proxy:
        # as urllib would: plain http through the proxy with the full address, https through a tunnel
        p = urllib.parse.urlsplit(proxy)
        tunnel_headers = {}
        if p.username:
            pair = f"{urllib.parse.unquote(p.username)}:{urllib.parse.unquote(p.password or '')}"
            tunnel_headers["Proxy-Authorization"] = Secret("Basic " + base64.b64encode(pair.encode()).decode())
        if parts.scheme == "https":
            conn = _HTTPS(p.hostname or "", p.port or 80, timeout=left, context=ssl.create_default_context())
            conn.set_tunnel(host, port, headers=tunnel_headers)
        else:
            conn = _HTTP(p.hostname or "", p.port or 80, timeout=left)
            path = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
            headers.update(tunnel_headers)
    elif parts.scheme == "https":
        conn = _HTTPS(host, port, timeout=left, context=ssl.create_default_context())
    else:
        conn = _HTTP(host, port, timeout=left)
    cut = threading.Event()

    def close_at_deadline() -> None:
        cut.set()
        sock = conn.kept
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = None
    if left is not None:
        timer = threading.Timer(left, close_at_deadline)
        timer.daemon = True
        timer.start()
    try:
        conn.request("POST", path, body=data, headers=headers)
        response = conn.getresponse()
        declared = response.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > limit:
            raise _TooLarge()
        chunks: list[bytes] = []
        size = 0
        while True:
            # the deadline is checked between reads, and each read waits at most for what is left of it
            left = deadline.left()
            if cut.is_set() or (left is not None and left <= 0):
                raise _Expired()
            if left is not None and conn.kept is not None:
                conn.kept.settimeout(left)
            chunk = response.read1(_READ_SIZE)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise _TooLarge()
            chunks.append(chunk)
        if cut.is_set():
            raise _Expired()
        return response.status, response.headers, b"".join(chunks)
    except (_Expired, _TooLarge):
        raise
    except (socket.timeout, TimeoutError):
        raise _Expired() from None
    except (OSError, http.client.HTTPException) as exc:
        if cut.is_set() or deadline.passed():
            raise _Expired() from None
        raise _NoConnection(getattr(exc, "reason", None) or exc or type(exc).__name__) from None
    finally:
        if timer is not None:
            timer.cancel()
        conn.close()
        if conn.kept is not None:
            try:
                conn.kept.close()
            except OSError:
                pass


def _retry_after(value: str | None, tries: int) -> float:
    """Seconds to wait before asking again: the server's Retry-After (seconds or an HTTP date), else a
    back-off of 0.5, 1, 2 s."""
    if value:
        value = value.strip()
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds):
            return max(0.0, seconds)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, when.timestamp() - time.time())
    return 0.5 * 2**tries


def _snippet(raw: bytes) -> str:
    return " ".join(raw[:2000].decode("utf-8", "replace").split())[:300]


_STATUS_ADVICE = {
    400: "the server refused the request: does the prompt fit the model's context, and does the server accept "
    "its parameters (logprobs, top_logprobs, max_tokens)?",
    401: "the server refused the API key: set OPENAI_API_KEY to a key it accepts",
    403: "the server refused the API key: set OPENAI_API_KEY to a key it accepts",
    404: "is the API base right (scheme, host, port, the /v1 suffix), and does the server serve this model name?",
    413: "the request is larger than the server takes: shorten the texts judged",
    422: "the server refused the request's parameters: does it accept logprobs and top_logprobs?",
}


def post_json(
    url: str,
    body: dict,
    *,
    api_key: str | None,
    timeout: float | None,
    model: str,
    api_base: str,
    limit: int = BODY_LIMIT,
    advice: dict[type, str] | None = None,
) -> Any:
    """POST ``body`` as JSON to ``url`` (under ``api_base``) and return the decoded JSON answer, under the
    client's trust rules (see the module's docstring). Every failure is a named
    :class:`~pytest_nlgeval.llm.errors.JudgeServerError` for ``model`` at ``api_base``; ``advice`` replaces
    an error class's advice (a caller's own option names)."""
    advice = advice or {}
    endpoint = url[len(api_base) :] if url.startswith(api_base) else urllib.parse.urlsplit(url).path

    def error(cls: type[JudgeServerError], detail: str, **extra: Any) -> JudgeServerError:
        # the caller's advice names its own options; otherwise the status's, otherwise the class's
        told = extra.pop("advice", None)
        return cls(model, api_base, masked(detail, api_key), advice=advice.get(cls) or told, **extra)

    home = origin(api_base)
    if home is None or origin(url) != home:
        raise error(
            JudgeServerUnreachable,
            f"the API base {api_base!r} is not an http:// or https:// address with a host",
            advice="give the API base as the server's address with its scheme, e.g. http://127.0.0.1:8080/v1",
        )
    data = json.dumps(body).encode("utf-8")
    warn_if_key_in_clear_text(api_base, api_key)
    api_key = Secret(api_key) if api_key else NO_KEY  # masked in every frame of a traceback from here on
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "pytest-nlgeval",
        "Authorization": Secret("Bearer " + api_key),
    }
    deadline = _Deadline(timeout)
    shown_timeout = f"{timeout:g} s" if timeout is not None else "the time-out"
    target, tries, redirects = url, 0, 0
    while True:
        try:
            status, answer_headers, raw = _exchange(target, data, headers, deadline, limit)
        except _Expired:
            waited = f" ({tries} retries after HTTP 429/503 included)" if tries else ""
            detail = f"no complete answer from {endpoint} within {shown_timeout}{waited}"
            raise error(JudgeServerTimeout, detail) from None
        except _TooLarge:
            raise error(
                JudgeServerAnswerTooLarge,
                f"{endpoint} answered with more than {limit:,} bytes; the client reads no further",
                field="body",
            ) from None
        except _NoConnection as exc:
            raise error(JudgeServerUnreachable, f"{endpoint}: {exc.reason}") from None
        if not 200 <= status < 300:
            # an error page that echoes the request (its Authorization header) must not carry the key into a
            # message, nor into this frame's locals that a traceback with --showlocals prints
            raw = masked_bytes(raw, api_key)
        if status in _REDIRECTS:
            location = answer_headers.get("Location") or ""
            new = urllib.parse.urljoin(target, location.strip())
            where = origin(new)
            if not location.strip() or where is None:
                raise error(
                    JudgeServerHTTPError, f"HTTP {status} from {endpoint} without a usable Location", status=status
                )
            if where != home:
                raise error(
                    JudgeServerRedirect,
                    f"HTTP {status} from {endpoint} to {_show(where)}{urllib.parse.urlsplit(new).path}; the API key "
                    f"goes to {_show(home)} only, and the request was not sent there",
                    status=status,
                )
            redirects += 1
            if redirects > MAX_REDIRECTS:
                raise error(
                    JudgeServerRedirect,
                    f"more than {MAX_REDIRECTS} redirects from {endpoint} "
                    f"(the last to {urllib.parse.urlsplit(new).path})",
                    status=status,
                    advice="give the API base the address the server finally answers at",
                )
            target = new
            continue
        if status in RETRY_STATUSES:
            wait = _retry_after(answer_headers.get("Retry-After"), tries)
            left = deadline.left()
            fits = wait <= RETRY_AFTER_LIMIT if left is None else wait < left
            if tries < MAX_RETRIES and fits:
                time.sleep(wait)
                tries += 1
                continue
            if tries >= MAX_RETRIES:
                why = f"after {tries + 1} requests"
            else:
                why = f"and asks to wait {wait:g} s, more than the {shown_timeout} time-out leaves"
                why += f" ({tries} retries made)"
            detail = f"HTTP {status} from {endpoint} {why}: {_snippet(raw)}"
            if status == 429:
                raise error(JudgeServerRateLimited, "rate limited, " + detail, status=status)
            raise error(JudgeServerHTTPError, "still unavailable, " + detail, status=status)
        if not 200 <= status < 300:
            raise error(
                JudgeServerHTTPError,
                f"HTTP {status} from {endpoint} {_snippet(raw)}",
                status=status,
                advice=_STATUS_ADVICE.get(status),
            )
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:  # also UnicodeDecodeError
            raw = masked_bytes(raw, api_key)
            raise error(
                JudgeServerAnswerError, f"{endpoint} answered with a body that is not JSON ({exc})", field="body"
            ) from None
