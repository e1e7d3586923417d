"""Edit-distance metrics through rapidfuzz (C++ implementations of Levenshtein and Jaro-Winkler).

* ``levenshtein``: character-level normalised similarity ``1 - d(a, b) / max(|a|, |b|)`` where ``d``
  counts insertions, deletions and substitutions (Levenshtein, 1966); the best reference counts.
* ``word_edit_rate``: word-level Levenshtein distance divided by the reference length in words
  (the word error rate of speech recognition); the closest reference counts. Lower is better.
* ``jaro_winkler``: Jaro similarity with Winkler's common-prefix bonus (Winkler, 1990), prefix weight 0.1.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> get_metric("levenshtein").score("kitten", references=["sitting"])  # 3 edits / 7 chars
    0.5714285714285714
"""

from __future__ import annotations

from pytest_nlgeval.metrics._text import TOKENIZATION, tokens
from pytest_nlgeval.metrics.base import Metric, package_version


class _Rapidfuzz(Metric):
    needs_references = True

    def __init__(self, lowercase: bool = False):
        self.lowercase = bool(lowercase)

    def _prep(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _options(self):
        return {"case": "lc" if self.lowercase else "mixed"}

    def _versions(self):
        return {"rapidfuzz": package_version("rapidfuzz")}


class LevenshteinSimilarity(_Rapidfuzz):
    """Character-level normalised Levenshtein similarity in [0, 1], best over references.

    Two empty strings are identical (1.0).

    >>> LevenshteinSimilarity().score("abc", references=["abd", "xyz"])
    0.6666666666666667
    """

    name = "levenshtein"

    def _score(self, output, input, references):
        from rapidfuzz.distance import Levenshtein

        out = self._prep(output)
        return max(Levenshtein.normalized_similarity(out, self._prep(r)) for r in references)


class WordEditRate(_Rapidfuzz):
    """Word-level edits (insert, delete, substitute) per reference word; the closest reference counts.

    0 means identical word sequences; the rate exceeds 1 when the output is much longer than the
    reference. Words are lowercased word/punctuation tokens by default.

    >>> WordEditRate().score("the cat sat", references=["the cat sat down"])
    0.25
    """

    name = "word_edit_rate"
    higher_is_better = False

    def __init__(self, lowercase: bool = True):
        super().__init__(lowercase)

    def _score(self, output, input, references):
        from rapidfuzz.distance import Levenshtein

        out = tokens(output, self.lowercase)
        best = None
        for ref in references:
            ref_toks = tokens(ref, self.lowercase)
            d = Levenshtein.distance(out, ref_toks)  # rapidfuzz compares sequences of hashables
            rate = d / len(ref_toks) if ref_toks else (0.0 if not out else float(len(out)))
            best = rate if best is None else min(best, rate)
        return best

    def _options(self):
        return {"tok": TOKENIZATION if self.lowercase else "word-punct"}


class JaroWinkler(_Rapidfuzz):
    """Jaro-Winkler similarity of the character strings in [0, 1], best over references.

    >>> round(JaroWinkler().score("martha", references=["marhta"]), 4)
    0.9611
    """

    name = "jaro_winkler"

    def _score(self, output, input, references):
        from rapidfuzz.distance import JaroWinkler as JW

        out = self._prep(output)
        return max(JW.similarity(out, self._prep(r), prefix_weight=0.1) for r in references)
