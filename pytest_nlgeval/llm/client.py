"""An OpenAI-compatible chat client on the standard library (no DSPy, no LiteLLM).

It is called the way the answer cache calls a ``dspy.LM`` (``client(messages=[...], **params)`` returns a list
of answers: the text, or ``{"text", "logprobs"}`` when log-probabilities were asked for), and it keeps the
same ``model`` and ``kwargs``, so an answer cached through either is found through the other. The request
follows OpenAI's chat completions API (``POST {api_base}/chat/completions``); ``rollout_id`` (a cache key
that tells repeated samples apart) is not sent.

    >>> client = OpenAIClient("openai/judge", api_base="http://127.0.0.1:8080/v1")      # doctest: +SKIP
    >>> client(messages=[{"role": "user", "content": "Say yes."}], max_tokens=4)        # doctest: +SKIP
    ['Yes.']
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

__all__ = ["OpenAIClient", "BODY_LIMIT"]

#: the largest answer body read (a chat answer with log-probabilities of a few hundred tokens fits easily)
BODY_LIMIT = 8_000_000
#: parameters that shape the cache key or the transport, never sent in the request body
_NOT_SENT = {"api_base", "api_key", "timeout", "rollout_id", "num_retries", "request_timeout"}


class OpenAIClient:
    """Chat requests to the OpenAI-compatible server at ``api_base`` for ``model`` (``openai/<name>``: the
    name after the provider prefix is what the server is asked for). ``api_key`` defaults to ``no-key``
    (local servers ignore it). ``timeout`` is seconds per request; a request is sent once."""

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
        self.kwargs["api_key"] = api_key or "no-key"
        if timeout is not None:
            self.kwargs["timeout"] = float(timeout)
        #: one entry per request with the server's ``usage``, as a dspy.LM keeps it
        self.history: list[dict] = []

    def __repr__(self) -> str:
        return f"OpenAIClient({self.model!r}, api_base={self.kwargs['api_base']!r})"

    def __call__(self, prompt: str | None = None, *, messages: list[dict] | None = None, **kwargs: Any) -> list:
        from pytest_nlgeval.llm.errors import JudgeServerHTTPError, JudgeServerTimeout, JudgeServerUnreachable

        if messages is None:
            if prompt is None:
                raise ValueError("give the prompt or the messages")
            messages = [{"role": "user", "content": prompt}]
        merged = {**self.kwargs, **kwargs}
        api_base = str(merged["api_base"]).rstrip("/")
        body = {"model": self.model.split("/", 1)[-1], "messages": messages}
        body.update({k: v for k, v in merged.items() if k not in _NOT_SENT and v is not None})
        request = urllib.request.Request(
            api_base + "/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {merged['api_key']}"},
        )
        timeout = merged.get("timeout")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(BODY_LIMIT + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", "replace") if exc.fp is not None else ""
            raise JudgeServerHTTPError(
                self.model, api_base, f"HTTP {exc.code} from /chat/completions {' '.join(detail.split())[:300]}",
                status=exc.code,
            ) from None  # fmt: skip
        except (socket.timeout, TimeoutError):
            raise JudgeServerTimeout(self.model, api_base, f"no answer within {timeout:g} s") from None
        except (urllib.error.URLError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise JudgeServerTimeout(self.model, api_base, f"no answer within {timeout:g} s") from None
            raise JudgeServerUnreachable(self.model, api_base, f"/chat/completions: {reason}") from None
        try:
            if len(raw) > BODY_LIMIT:
                raise ValueError(f"longer than {BODY_LIMIT:,} bytes")
            answer = json.loads(raw)
            choices = answer["choices"]
            if not isinstance(choices, list):
                raise ValueError("'choices' is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            detail = f"/chat/completions answered with a body that is not an OpenAI chat completion ({exc})"
            raise JudgeServerHTTPError(self.model, api_base, detail) from None
        self.history.append({"usage": answer.get("usage") if isinstance(answer.get("usage"), dict) else None})
        outputs: list = []
        for choice in choices:
            message = choice.get("message") if isinstance(choice, dict) else None
            text = str((message or {}).get("content") or "")
            if merged.get("logprobs"):
                outputs.append({"text": text, "logprobs": choice.get("logprobs")})
            else:
                outputs.append(text)
        return outputs
