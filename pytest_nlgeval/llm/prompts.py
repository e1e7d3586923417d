"""Text as it goes into a judge's prompt."""

from __future__ import annotations

__all__ = ["NONE", "clip"]

_MAX_TEXT = 1500  # characters of one example shown in a generation prompt
#: what a prompt shows for a field the judge is not given
NONE = "(none)"


def clip(text: str | None, limit: int = _MAX_TEXT) -> str:
    """``text`` stripped and cut to ``limit`` characters (ending in "..."); :data:`NONE` for None."""
    if text is None:
        return NONE
    text = str(text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
