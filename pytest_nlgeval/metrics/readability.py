"""Readability formulas: Flesch-Kincaid Grade Level and Flesch Reading Ease, computed here.

* FKGL = 0.39 * (words / sentences) + 11.8 * (syllables / words) - 15.59
  (Kincaid, Fishburne, Rogers & Chissom, 1975, Research Branch Report 8-75, Naval Technical Training).
* FRE = 206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words) (Flesch, 1948).

Counting is our own and documented, because published tools differ mainly here:

* sentences: runs of text ending in ``.``, ``!`` or ``?`` (a final unterminated run counts too);
* words: runs of word characters (``don't`` is one word, numbers are words);
* syllables: groups of consecutive vowels (``aeiouy``) in the lowercased word, minus one for a silent
  final ``e`` (not after ``l`` as in "table", not for "-ee"), at least one per word; a number counts one
  syllable per digit group.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> round(get_metric("fkgl").score("The cat sat on the mat."), 2)  # 0.39*6 + 11.8*1 - 15.59
    -1.45
"""

from __future__ import annotations

import re

from pytest_nlgeval.metrics._text import words
from pytest_nlgeval.metrics.base import Metric, MetricInputError

_SENTENCE_END = re.compile(r"[.!?]+")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def count_syllables(word: str) -> int:
    """Heuristic English syllable count (see the module docstring).

    >>> [count_syllables(w) for w in ["cat", "table", "made", "reading", "see", "rhythm"]]
    [1, 2, 1, 2, 1, 1]
    """
    w = word.lower()
    if not any(c.isalpha() for c in w):
        return 1
    groups = len(_VOWEL_GROUPS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee")) and groups > 1:
        groups -= 1  # silent final e: "made", "source"
    elif w.endswith("le") and len(w) > 2 and w[-3] in "aeiouy" and groups > 1:
        groups -= 1  # "whale", "mile": the e is silent after a vowel + l
    return max(1, groups)


def count_sentences(text: str) -> int:
    parts = [p for p in _SENTENCE_END.split(text) if words(p)]
    return max(1, len(parts))


def text_statistics(text: str) -> tuple[int, int, int]:
    """(sentences, words, syllables) of ``text``."""
    ws = words(text)
    return count_sentences(text), len(ws), sum(count_syllables(w) for w in ws)


class _Readability(Metric):
    def _stats(self, output: str) -> tuple[int, int, int]:
        s, w, syl = text_statistics(output)
        if w == 0:
            raise MetricInputError(
                f"metric {self.name!r}: the output has no words, so readability is undefined; "
                "check for empty generations before scoring"
            )
        return s, w, syl

    def _feedback(self, output, input, references, value):
        s, w, syl = self._stats(output)
        return (
            f"{self.name} {value:.2f}: {w} words in {s} sentence(s) ({w / s:.1f} words/sentence), "
            f"{syl / w:.2f} syllables/word."
        )

    def _options(self):
        return {"syllables": "vowel-groups", "sentences": "punct"}


class FleschKincaidGrade(_Readability):
    """Flesch-Kincaid Grade Level (US school grade; lower = easier to read).

    >>> # 9 words, 1 sentence, 11 syllables: 0.39*9 + 11.8*11/9 - 15.59
    >>> round(FleschKincaidGrade().score("The quick brown fox jumps over the lazy dog."), 2)
    2.34
    """

    name = "fkgl"
    higher_is_better = False

    def _score(self, output, input, references):
        s, w, syl = self._stats(output)
        return 0.39 * (w / s) + 11.8 * (syl / w) - 15.59


class FleschReadingEase(_Readability):
    """Flesch Reading Ease (0-100 for most prose; higher = easier).

    >>> round(FleschReadingEase().score("The cat sat on the mat."), 2)
    116.15
    """

    name = "flesch_reading_ease"

    def _score(self, output, input, references):
        s, w, syl = self._stats(output)
        return 206.835 - 1.015 * (w / s) - 84.6 * (syl / w)
