"""JSON text read strictly, and the line a value sits on: what lets a baseline error name its line.

``json.loads`` keeps the last of two equal keys and reads ``NaN``/``Infinity``; a baseline that does either was
edited by hand or merged wrongly, so :func:`loads_strict` refuses both. Python's parser gives no positions for
values, so :func:`line_of` finds a field by searching the text for a chain of regex anchors (the entry's key,
then the field's name), which is what the error messages of :mod:`pytest_nlgeval.baseline.store` point at.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_nlgeval.errors import NLGEvalError

__all__ = [
    "DuplicateKey",
    "NonFiniteNumber",
    "key_pattern",
    "line_at",
    "line_of",
    "line_of_duplicate",
    "loads_strict",
    "string_pattern",
]


class DuplicateKey(NLGEvalError, ValueError):
    """An object holds the same key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} appears twice")
        self.key = key


class NonFiniteNumber(NLGEvalError, ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``, which JSON does not have."""

    def __init__(self, token: str) -> None:
        super().__init__(f"{token} is not a JSON number")
        self.token = token


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen[key] = value
    return seen


def _no_constants(token: str) -> Any:
    raise NonFiniteNumber(token)


def loads_strict(text: str) -> Any:
    """``json.loads`` that raises :class:`DuplicateKey` and :class:`NonFiniteNumber` instead of guessing."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)


def string_pattern(value: str) -> str:
    """A regex matching ``value`` as a JSON string literal, written with or without ``\\u`` escapes."""
    forms = {json.dumps(value), json.dumps(value, ensure_ascii=False)}
    return "(?:" + "|".join(re.escape(f) for f in sorted(forms)) + ")"


def key_pattern(key: str) -> str:
    """A regex matching ``key`` as an object key (the string and its colon)."""
    return string_pattern(key) + r"\s*:"


def line_at(text: str, pos: int) -> int:
    """The 1-based line of character ``pos``."""
    return text.count("\n", 0, pos) + 1


def line_of(text: str | None, anchors: list[str], stop_at: str | None = None) -> int | None:
    """Line of the last of ``anchors`` (regexes), each searched after the previous one; the line of the last
    one found when a later one is missing.

    With ``stop_at``, later anchors must occur before that character (the end of a flat entry object).
    """
    if text is None:
        return None
    pos, line = 0, None
    for i, anchor in enumerate(anchors):
        match = re.compile(anchor).search(text, pos)
        if match is None:
            return line
        if i > 0 and stop_at is not None and stop_at in text[pos : match.start()]:
            return line
        pos, line = match.end(), line_at(text, match.start())
    return line


def line_of_duplicate(text: str, key: str) -> int | None:
    """The line of the second occurrence of ``key`` (the first when it occurs once)."""
    matches = list(re.finditer(key_pattern(key), text))
    if len(matches) >= 2:
        return line_at(text, matches[1].start())
    return line_at(text, matches[0].start()) if matches else None
