"""Signs of broken form that a reader names at once, read from the text itself.

The fluency model answers "is this a fluent paragraph?" from what it learned; a reader also points at two
things no model needs to learn:

- **the text breaks off**: its last sentence ends without a full stop, question or exclamation mark (an output
  cut at a length limit). Read only when the text has two sentences or more, and never on a list item or a
  heading, which end without one.
- **a word said twice in a row** ("the the"), a slip of generation. Words that English doubles ("had had",
  "that that") are not counted.

Each sign found multiplies the score by ``1 - penalty``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: words that English legitimately doubles
DOUBLED_WORDS = {"had", "that", "is", "do", "very", "so", "no", "bye", "ha", "knock", "well", "many", "far"}
_END = re.compile(r"""[.!?…]['"’”`)\]]*\s*$""")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|#+)\s")
_WORDS = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


@dataclass
class Form:
    """The signs found in one text and the factor they give."""

    findings: list[str] = field(default_factory=list)
    penalty: float = 0.5

    @property
    def factor(self) -> float:
        return (1.0 - self.penalty) ** len(self.findings)


def _clip(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else "..." + text[-(width - 3) :]


def read_form(text: str, sentences: list[str], *, penalty: float = 0.5) -> Form:
    """The signs of broken form in ``text`` (``sentences``: its sentences, in order)."""
    if not 0.0 <= penalty <= 1.0:
        raise ValueError(f"penalty must be in [0, 1], got {penalty}")
    form = Form(penalty=penalty)
    last_line = text.strip().splitlines()[-1] if text.strip() else ""
    if len(sentences) >= 2 and not _END.search(text.strip()) and not _LIST_ITEM.match(last_line):
        form.findings.append(f"form: the text breaks off: {_clip(sentences[-1])!r} ends without a full stop")
    words = _WORDS.findall(text)
    for a, b in zip(words, words[1:]):
        if a.lower() == b.lower() and a.lower() not in DOUBLED_WORDS:
            form.findings.append(f"form: a word said twice in a row: {a + ' ' + b!r}")
            break
    return form
