"""BM25 retrieval over a small corpus (Robertson & Zaragoza, 2009; Okapi BM25 with k1=1.5, b=0.75).

UniEval retrieves the summary or document whose sentences make hard negatives with BM25. An inverted
index keeps a query proportional to the postings of its terms instead of the corpus size.

    >>> index = BM25Index(["the cat sat on the mat", "dogs bark at night", "a cat and a dog"])
    >>> index.top(["cat", "mat"], k=2)
    [0, 2]
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an the and or but of to in on at for with by from as is are was were be been it its this that these "
    "those he she they we you i his her their our your him them us me my not no so if then than there here "
    "has have had do does did will would can could should may might said says".split())


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class BM25Index:
    """Okapi BM25 over tokenised documents; :meth:`top` returns document indices, best first."""

    def __init__(self, documents: list[str] | list[list[str]], k1: float = 1.5, b: float = 0.75):
        if not documents:
            raise ValueError("BM25Index needs at least one document")
        docs = [tokenize(d) if isinstance(d, str) else list(d) for d in documents]
        self.k1, self.b = k1, b
        self.n_docs = len(docs)
        self.lengths = [len(d) for d in docs]
        self.avg_length = max(sum(self.lengths) / self.n_docs, 1e-9)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                self.postings[term].append((i, tf))
        # Lucene's non-negative idf variant, so very common terms never subtract.
        self.idf = {t: math.log(1 + (self.n_docs - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def scores(self, query: str | list[str]) -> dict[int, float]:
        terms = tokenize(query) if isinstance(query, str) else query
        out: dict[int, float] = defaultdict(float)
        for term in set(terms):
            postings = self.postings.get(term)
            if not postings:
                continue
            idf = self.idf[term]
            for i, tf in postings:
                norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg_length)
                out[i] += idf * tf * (self.k1 + 1) / (tf + norm)
        return out

    def top(self, query: str | list[str], k: int = 5, exclude: set[int] | frozenset[int] = frozenset()) -> list[int]:
        """Indices of the ``k`` best documents for ``query`` (ties by index), skipping ``exclude``."""
        scored = [(-s, i) for i, s in self.scores(query).items() if i not in exclude and s > 0]
        scored.sort()
        return [i for _, i in scored[:k]]
