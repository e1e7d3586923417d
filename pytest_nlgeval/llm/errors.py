"""The errors of the LLM layer: a server that fails a request, an answer that cannot be read, a missing extra.

Every failure of a judge LM's server is one of the :class:`JudgeServerError` subclasses, naming the model,
the server and what to check; an answer from which no score can be read after a retry is a
:class:`JudgeParseError`.
"""

from __future__ import annotations

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.util.extras import MissingExtraError

__all__ = [
    "JudgeParseError",
    "JudgeServerError",
    "JudgeServerHTTPError",
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


def _server_error(
    exc: Exception, model: str, api_base: str | None, advice: dict[type, str] | None = None
) -> JudgeServerError | None:
    """The named error for a DSPy LM failure that the server or the network caused; None for any other.
    ``advice``: the advice of an error class where the caller's options differ from ``nlgeval induce``'s.
    The project's own client raises the named errors itself; they come back with the caller's advice."""
    error = exc if isinstance(exc, JudgeServerError) else _classify(exc, model, api_base)
    if error is not None and advice and type(error) in advice:
        error = type(error)(model, api_base, error.detail, status=error.status, advice=advice[type(error)])
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
