"""METEOR (Banerjee & Lavie, 2005) through NLTK's ``meteor_score``, with WordNet 3.0 read from disk.

NLTK aligns exact matches, then Porter-stem matches, then WordNet synonyms, and computes
``Fmean * (1 - Penalty)`` with Fmean = P R / (alpha P + (1 - alpha) R) and
Penalty = gamma * (chunks / matches) ** beta (alpha 0.9, beta 3, gamma 0.5). With several references
NLTK keeps the best score.

WordNet is not bundled. The metric uses, in order: ``wordnet_dir=...``; ``$NLGEVAL_WORDNET_DIR``;
a WordNet 3.0 database folder installed by the system (Debian/Ubuntu: ``apt-get install wordnet-base``,
which puts it in ``/usr/share/wordnet``); NLTK's own ``wordnet`` corpus when NLTK's data path has it.
Without any of them it raises :class:`MetricUnavailableError` saying so.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> get_metric("meteor").score("the cat sat on the mat", references=["the cat sat on the mat"])  # doctest: +SKIP
    0.9996...
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache

from pytest_nlgeval.metrics._text import words
from pytest_nlgeval.metrics.base import Metric, MetricUnavailableError, package_version

_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _wordnet_db(folder: str):
    from pytest_nlgeval.metrics._wordnet import WordNetDB

    return WordNetDB(folder)


def load_wordnet(wordnet_dir: str | None = None):
    """Return ``(wordnet, label)``: a WordNet object for NLTK's METEOR and where it came from."""
    from pytest_nlgeval.metrics._wordnet import find_wordnet_dir

    folder = find_wordnet_dir(wordnet_dir)
    if folder is not None:
        with _LOCK:
            return _wordnet_db(str(folder)), f"wn3.0@{folder}"
    if wordnet_dir is None:
        try:
            import nltk

            nltk.data.find("corpora/wordnet")
            from nltk.corpus import wordnet

            wordnet.ensure_loaded()
            return wordnet, "nltk-wordnet"
        except (LookupError, ImportError, OSError):
            pass
    where = f"{wordnet_dir!r}, " if wordnet_dir else ""
    raise MetricUnavailableError(
        "metric 'meteor' needs the WordNet 3.0 database, which is not bundled and was not found in "
        f"{where}$NLGEVAL_WORDNET_DIR, /usr/share/wordnet or NLTK's data path. Install it with "
        "`apt-get install wordnet-base` (Debian/Ubuntu) or `python -m nltk.downloader wordnet`, "
        "or pass wordnet_dir=FOLDER holding index.noun and data.noun"
    )


class Meteor(Metric):
    """METEOR via NLTK on lowercased word tokens, WordNet synonyms from disk.

    ``wordnet_dir`` is a WordNet 3.0 database folder (default: search as described in the module);
    ``alpha``, ``beta`` and ``gamma`` are NLTK's METEOR parameters.
    """

    name = "meteor"
    needs_references = True

    def __init__(self, wordnet_dir: str | None = None, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5):
        self.wordnet_dir = None if wordnet_dir is None else os.fspath(wordnet_dir)
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self._wn = None
        self._wn_label = None

    def _wordnet(self):
        if self._wn is None:
            self._wn, self._wn_label = load_wordnet(self.wordnet_dir)
        return self._wn

    def _score(self, output, input, references):
        from pytest_nlgeval.util.extras import require

        meteor_score = require("nltk.translate.meteor_score", "metric 'meteor'").meteor_score
        hyp = [w.lower() for w in words(output)]
        refs = [[w.lower() for w in words(r)] for r in references]
        return float(
            meteor_score(refs, hyp, wordnet=self._wordnet(), alpha=self.alpha, beta=self.beta, gamma=self.gamma)
        )

    def _options(self):
        self._wordnet()
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "gamma": self.gamma,
            "wordnet": self._wn_label,
            "tok": "lower-words",
        }

    def _versions(self):
        return {"nltk": package_version("nltk")}
