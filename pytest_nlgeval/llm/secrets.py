"""Keeping the judge's API key out of every artifact: tracebacks, JUnit XML, results, reports, baselines.

Three rules (docs/judges.md, "Secrets"):

* the key is held as a :class:`Secret`, a string whose ``repr`` is masked, so that a traceback that shows a
  function's arguments or locals (pytest's long tracebacks, ``--showlocals``, the JUnit XML) never prints it;
  the ``Authorization`` header the client builds from it is one too;
* an API base is stored and shown by :func:`public_url` only: without ``user:password@``, the query string
  and the fragment, where a key can also hide (``?api-key=...``);
* a key that would go in clear text (``http://``) to a host other than this machine's loopback raises a
  :class:`KeyInClearTextWarning` once per server before it is sent: the key is readable by anyone on the
  path. Use ``https://``, or a server on loopback, or no key (local servers ignore it).

    >>> public_url("http://ann:hunter2@judge.lan:8080/v1?api-key=sk-1#x")
    'http://judge.lan:8080/v1'
    >>> repr(Secret("sk-123"))
    "'<secret hidden>'"
"""

from __future__ import annotations

import ipaddress
import re
import threading
import urllib.parse
import warnings
from typing import Any

__all__ = [
    "API_KEY_VARIABLES",
    "KeyInClearTextWarning",
    "NO_KEY",
    "Secret",
    "judge_api_key",
    "key_in_clear_text",
    "masked",
    "masked_bytes",
    "public_params",
    "public_url",
    "warn_if_key_in_clear_text",
]

#: the key sent when none is set: local servers (llama.cpp, vLLM, Ollama) ignore it, and it is no secret
NO_KEY = "no-key"
#: where the judge's key is read from, first one set wins: a variable for the judge alone, then OpenAI's
API_KEY_VARIABLES = ("NLGEVAL_JUDGE_API_KEY", "OPENAI_API_KEY")
#: request parameters that hold an address (stored by :func:`public_url` only)
_ADDRESS_PARAMS = ("api_base", "base_url")
_MASK = "<secret hidden>"
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#@]*@")


class Secret(str):
    """A string whose ``repr`` is masked: it reads and is sent as the value it holds, but a traceback, a log
    of a dict that holds it, or a ``repr`` of an object that keeps it shows ``'<secret hidden>'``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return repr(_MASK)

    def __reduce__(self):  # a pickled copy (pytest-xdist, multiprocessing) is masked as well
        return (Secret, (str.__str__(self),))


class KeyInClearTextWarning(UserWarning):
    """The judge's API key is about to be sent over plain http to a host that is not this machine."""


def public_url(url: Any) -> Any:
    """``url`` without ``user:password@``, query string and fragment: the form an address is stored and
    shown in. A value that is not a string is returned as it is; one that is not a URL, unchanged."""
    if not isinstance(url, str):
        return url
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:  # not readable as a URL: still cut what could be a secret
        head = url.split("?", 1)[0].split("#", 1)[0]
        return _USERINFO.sub(r"\1", head)
    if not parts.netloc and not parts.query and not parts.fragment:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def masked(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by the mask (a server that echoes the request's
    ``Authorization`` header in its error page must not put the key into the error's message). A secret shorter
    than 8 characters, or :data:`NO_KEY`, is left alone: it is no key, and masking it would garble the text."""
    if not secret or len(secret) < 8 or str.__str__(secret) == NO_KEY:
        return text
    return text.replace(str.__str__(secret), _MASK)


def masked_bytes(data: bytes, secret: str | None) -> bytes:
    """:func:`masked` for a body read from the network (the key as UTF-8 bytes)."""
    if not secret or len(secret) < 8 or str.__str__(secret) == NO_KEY:
        return data
    return data.replace(str.__str__(secret).encode("utf-8"), _MASK.encode())


def public_params(params: dict) -> dict:
    """``params`` with every address in its public form (:func:`public_url`)."""
    return {k: public_url(v) if k in _ADDRESS_PARAMS else v for k, v in params.items()}


def judge_api_key(environ: Any = None) -> Secret | None:
    """The judge's key from the environment (``NLGEVAL_JUDGE_API_KEY``, else ``OPENAI_API_KEY``), or None."""
    import os

    env = os.environ if environ is None else environ
    for name in API_KEY_VARIABLES:
        value = env.get(name)
        if value:
            return Secret(value)
    return None


def _loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def key_in_clear_text(api_base: str, api_key: str | None) -> bool:
    """Whether a request to ``api_base`` would carry ``api_key`` readable on the network: a key is set (not
    :data:`NO_KEY`), the scheme is plain ``http`` and the host is not loopback."""
    if not api_key or str.__str__(api_key) == NO_KEY:
        return False
    try:
        parts = urllib.parse.urlsplit(api_base)
    except ValueError:
        return False
    return parts.scheme.lower() == "http" and bool(parts.hostname) and not _loopback(parts.hostname or "")


_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_if_key_in_clear_text(api_base: str, api_key: str | None, *, stacklevel: int = 3) -> None:
    """One :class:`KeyInClearTextWarning` per server address when :func:`key_in_clear_text`."""
    if not key_in_clear_text(api_base, api_key):
        return
    shown = public_url(api_base)
    with _warned_lock:
        if shown in _warned:
            return
        _warned.add(shown)
    warnings.warn(
        KeyInClearTextWarning(
            f"the judge's API key goes in clear text (plain http) to {shown}, a host that is not this machine: "
            "anyone on the network path can read it. Use https://, or a server on loopback, or no key "
            f"(unset {' and '.join(API_KEY_VARIABLES)}, or set NLGEVAL_JUDGE_API_KEY={NO_KEY}: local servers "
            "ignore it)"
        ),
        stacklevel=stacklevel,
    )
