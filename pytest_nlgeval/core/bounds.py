"""A bound on the text an output is read by when a dimension reads it whole or by its sentences.

A dimension that reads the output whole hands it to a model that reads its first few hundred tokens and cuts the
rest, and one that reads it by its sentences (fluency) or sentence pairs (coherence) scores every sentence;
tokenizing and splitting a 10 MB output cost a minute and gigabytes. An output longer than
:func:`whole_text_chars` characters is read as its head (far more than a model reads whole, some 800 sentences)
and its tail (where a text that breaks off shows it), joined at a paragraph break; the score's details say so
(``text_read``), and the form reading (:mod:`nlgeval_runtime.form`) still sees how the text ends.

    >>> len(bounded_text("word " * 2_000_000)) <= 2 * WHOLE_TEXT_CHARS + 2
    True
"""

from __future__ import annotations

__all__ = ["BOUNDED_UNITS", "TAIL_CHARS", "WHOLE_TEXT_CHARS", "bounded_text", "whole_text_chars"]

#: the units of the dimensions whose output is bounded: read whole, by its sentences, or by sentence pairs
BOUNDED_UNITS = ("whole", "sentence", "passage")

#: the head of a long output read whole: at least 128 characters per token of a 512-token model
WHOLE_TEXT_CHARS = 65_536
#: the tail of a long output kept after the head: its last sentences, where a cut-off text shows it
TAIL_CHARS = 2_048
_JOIN = "\n\n"


def whole_text_chars(max_length: int | None) -> int:
    """The head kept of an output read whole by a model of ``max_length`` tokens (None: unknown): at least
    :data:`WHOLE_TEXT_CHARS`, and 128 characters per token for a model that reads more."""
    return max(WHOLE_TEXT_CHARS, 128 * int(max_length or 0))


def bounded_text(text: str, head: int = WHOLE_TEXT_CHARS, tail: int = TAIL_CHARS) -> str:
    """``text`` itself when it is at most ``head + tail`` characters long; else its first ``head`` characters
    and its last ``tail``, each cut at white space so that no word is split, joined by a paragraph break."""
    if len(text) <= head + tail:
        return text
    start = text[:head]
    cut = max(start.rfind(" "), start.rfind("\n"))
    if cut > head // 2:
        start = start[:cut]
    end = text[-tail:]
    space = min((i for i in (end.find(" "), end.find("\n")) if i >= 0), default=-1)
    if 0 <= space < tail // 2:
        end = end[space + 1 :]
    return start.rstrip() + _JOIN + end.lstrip()
