"""The errors of the LLM layer: a server that fails a request, an answer that cannot be read, a missing extra.

Every failure of a judge LM's server is one of the :class:`JudgeServerError` subclasses, naming the model,
the server and what to check; an answer from which no score can be read after a retry is a
:class:`JudgeParseError`. The project's own client (:mod:`pytest_nlgeval.llm.client`) raises the finer
subclasses of :class:`JudgeServerHTTPError`: a body that is not an OpenAI answer
(:class:`JudgeServerAnswerError`, naming the field), one over the size limit
(:class:`JudgeServerAnswerTooLarge`), a redirect to another origin (:class:`JudgeServerRedirect`) and a
server that still refuses with HTTP 429 after the bounded retries (:class:`JudgeServerRateLimited`).
"""

from __future__ import annotations

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.util.extras import MissingExtraError

__all__ = [
    "JudgeParseError",
    "JudgeServerAnswerError",
    "JudgeServerAnswerTooLarge",
    "JudgeServerError",
    "JudgeServerHTTPError",
    "JudgeServerRateLimited",
    "JudgeServerRedirect",
    "JudgeServerTimeout",
    "JudgeServerUnreachable",
    "JudgesUnavailable",
]


class JudgeParseError(NLGEvalError, RuntimeError):
    """A judge's output could not be parsed into a score (after one retry), so the output has no score."""


class JudgesUnavailable(MissingExtraError):
    """DSPy is not installed; LLM judges need the optional extra ``judges``."""


class JudgeServerError(NLGEvalError):
    """The judge LM's server failed a request; the message names the model, the server and what to check.

    One of :class:`JudgeServerUnreachable`, :class:`JudgeServerTimeout`, :class:`JudgeServerHTTPError`.
    """

    what = "failed"
    advice = "check the server's log"

    def __init__(
        self, model: str, api_base: str | None, detail: str, *, status: int | None = None, advice: str | None = None
    ) -> None:
        from pytest_nlgeval.llm.secrets import public_url

        api_base = public_url(api_base)  # never a user:password@ or a query string in a message
        self.model, self.api_base, self.detail, self.status = model, api_base, detail, status
        self.original: Exception | None = None
        if advice:
            self.advice = advice
        where = f" at {api_base}" if api_base else ""
        super().__init__(f"{type(self).__name__}: the judge LM {model}{where} {self.what}: {detail}; {self.advice}")


class JudgeServerUnreachable(JudgeServerError):
    what = "could not be reached"
    advice = "is the server running, and is --api-base right (scheme, host, port, the /v1 suffix)?"


class JudgeServerTimeout(JudgeServerError):
    what = "did not answer in time"
    advice = "raise --timeout, lower --max-tokens or --threads, or use a faster model"


class JudgeServerHTTPError(JudgeServerError):
    what = "answered with an HTTP error"
    advice = "the server could not serve the request; see its log (is the model loaded, does it fit the context?)"


class JudgeServerAnswerError(JudgeServerHTTPError):
    """The server answered, but not with an OpenAI answer: no JSON, or a field of the wrong type or value.
    ``field`` names it (``choices[0].message``, ``usage.prompt_tokens``; ``body`` for the whole answer).
    Nothing of such an answer is cached."""

    what = "answered with a body that is not an OpenAI answer"
    advice = (
        "is the API base an OpenAI-compatible server's /v1 (llama.cpp, vLLM, Ollama) and not a proxy or a web "
        "page? If it is, its log or version is to blame: update or report it"
    )

    def __init__(
        self,
        model: str,
        api_base: str | None,
        detail: str,
        *,
        status: int | None = None,
        advice: str | None = None,
        field: str | None = None,
    ) -> None:
        self.field = field
        super().__init__(model, api_base, detail, status=status, advice=advice)


class JudgeServerAnswerTooLarge(JudgeServerAnswerError):
    """The answer's body is larger than the client reads (``BODY_LIMIT``); it was not read to its end."""

    what = "answered with a body larger than the client reads"
    advice = "lower the judge's max tokens; a chat answer with log-probabilities needs far less than the limit"


class JudgeServerRedirect(JudgeServerHTTPError):
    """The server redirected the request to another origin: the client sends the API key to the API base's
    origin only, so it refused to follow (nothing was sent there)."""

    what = "redirected the request to another origin, which the client does not follow"
    advice = (
        "the API key goes to the API base's own scheme, host and port only; if you trust the address it "
        "redirects to, give that address as the API base"
    )


class JudgeServerRateLimited(JudgeServerHTTPError):
    """HTTP 429 after the client's bounded retries (each after the server's ``Retry-After``, within the
    time-out)."""

    what = "rate limited the requests (HTTP 429)"
    advice = (
        "send fewer requests at once (fewer threads or xdist workers), raise the time-out so that the "
        "server's Retry-After fits in it, or raise the server's rate limit"
    )


def _server_error(
    exc: Exception, model: str, api_base: str | None, advice: dict[type, str] | None = None
) -> JudgeServerError | None:
    """The named error for a DSPy LM failure that the server or the network caused; None for any other.
    ``advice``: the advice of an error class where the caller's options differ from ``nlgeval induce``'s.
    The project's own client raises the named errors itself; they come back with the caller's advice."""
    error = exc if isinstance(exc, JudgeServerError) else _classify(exc, model, api_base)
    if error is not None and advice and type(error) in advice:
        fresh = type(error)(model, api_base, error.detail, status=error.status, advice=advice[type(error)])
        for name, value in vars(error).items():  # what a subclass adds (the field of an answer error)
            fresh.__dict__.setdefault(name, value)
        error = fresh
    return error


def _classify(exc: Exception, model: str, api_base: str | None) -> JudgeServerError | None:
    try:
        from dspy.utils import exceptions as dx
    except ImportError:  # pragma: no cover - DSPy without the 3.4 error classes
        return None
    detail = " ".join(str(exc).split())[:300]
    status = getattr(exc, "status", None)
    lowered = detail.lower()
    # LiteLLM reports a read time-out as a timeout, a transport error or (after its own retries, depending on
    # the client it reuses) an InternalServerError saying "timed out": all of them are the server's slowness.
    if isinstance(exc, dx.LMTimeoutError) or "timed out" in lowered:
        return JudgeServerTimeout(model, api_base, detail)
    # LiteLLM reports a refused connection as an InternalServerError (status 500) saying "Connection error."
    if (
        isinstance(exc, dx.LMTransportError)
        or "connection error" in lowered
        or "failed to connect" in lowered
        or "connection refused" in lowered
    ):
        return JudgeServerUnreachable(model, api_base, detail)
    if isinstance(exc, dx.LMProviderError) and (status is None or int(status) >= 500):
        return JudgeServerHTTPError(model, api_base, detail, status=None if status is None else int(status))
    return None
