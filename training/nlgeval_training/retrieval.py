"""BM25 retrieval over a small corpus (Robertson & Zaragoza, 2009; Okapi BM25 with k1=1.5, b=0.75).

UniEval retrieves the summary or document whose sentences make hard negatives with BM25. The index is a
sparse document-term matrix of BM25 term weights, so a query is one sparse product and a batch of
queries (:meth:`BM25Index.top_many`) is one sparse matrix product.

    >>> index = BM25Index(["the cat sat on the mat", "dogs bark at night", "a cat and a dog"])
    >>> index.top(["cat", "mat"], k=2)
    [0, 2]
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an the and or but of to in on at for with by from as is are was were be been it its this that these "
    "those he she they we you i his her their our your him them us me my not no so if then than there here "
    "has have had do does did will would can could should may might said says".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class BM25Index:
    """Okapi BM25 over tokenised documents; :meth:`top` returns document indices, best first."""

    def __init__(self, documents: list[str] | list[list[str]], k1: float = 1.5, b: float = 0.75):
        from scipy import sparse

        if not documents:
            raise ValueError("BM25Index needs at least one document")
        docs = [tokenize(d) if isinstance(d, str) else list(d) for d in documents]
        self.n_docs = len(docs)
        self.vocab: dict[str, int] = {}
        rows, cols, tfs = [], [], []
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                rows.append(i)
                cols.append(self.vocab.setdefault(term, len(self.vocab)))
                tfs.append(tf)
        lengths = np.array([len(d) for d in docs], dtype=np.float64)
        avg = max(lengths.mean(), 1e-9)
        rows_a, cols_a, tf_a = (
            np.array(rows, dtype=np.int64),
            np.array(cols, dtype=np.int64),
            np.array(tfs, dtype=np.float64),
        )
        df = np.bincount(cols_a, minlength=len(self.vocab)).astype(np.float64)
        # Lucene's non-negative idf variant, so very common terms never subtract.
        idf = np.log1p((self.n_docs - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * lengths[rows_a] / avg)
        weights = idf[cols_a] * tf_a * (k1 + 1) / (tf_a + norm)
        # terms x documents, so a query's score vector is a sum of rows.
        self.weights = sparse.csr_matrix((weights, (cols_a, rows_a)), shape=(len(self.vocab), self.n_docs))

    def _query_matrix(self, queries: list[str | list[str]]):
        from scipy import sparse

        rows, cols = [], []
        for q, query in enumerate(queries):
            terms = tokenize(query) if isinstance(query, str) else query
            for t in {self.vocab[t] for t in terms if t in self.vocab}:
                rows.append(q)
                cols.append(t)
        return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), len(self.vocab)))

    def scores(self, query: str | list[str]) -> np.ndarray:
        """BM25 score of every document for ``query`` (each distinct query term counted once)."""
        return np.asarray((self._query_matrix([query]) @ self.weights).todense()).ravel()

    def top(self, query: str | list[str], k: int = 5, exclude: set[int] | frozenset[int] = frozenset()) -> list[int]:
        """Indices of the ``k`` best documents with a positive score (ties by index), skipping ``exclude``."""
        return self._rank(self.scores(query), k, exclude)

    def top_many(
        self, queries: list[str | list[str]], k: int = 5, exclude: list[set[int]] | None = None, chunk: int = 512
    ) -> list[list[int]]:
        """:meth:`top` for many queries at once (one sparse product per ``chunk`` queries)."""
        out: list[list[int]] = []
        for start in range(0, len(queries), chunk):
            block = (self._query_matrix(queries[start : start + chunk]) @ self.weights).toarray()
            for j, row in enumerate(block):
                out.append(self._rank(row, k, exclude[start + j] if exclude else frozenset()))
        return out

    @staticmethod
    def _rank(row: np.ndarray, k: int, exclude) -> list[int]:
        row = row.copy()
        for i in exclude:
            row[i] = 0.0
        candidates = np.flatnonzero(row > 0)
        if candidates.size == 0:
            return []
        # Highest score first, lower index first among ties.
        order = np.lexsort((candidates, -row[candidates]))
        return [int(i) for i in candidates[order[:k]]]
