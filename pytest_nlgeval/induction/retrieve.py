"""Retrieve bank metrics for a task by their metric cards (AutoMetrics "Retrieve" step).

Ryan et al. (2025), Section 3.1: metric cards are the documents and a description of the task is the
query; the toolkit's query template is reproduced in :data:`QUERY_TEMPLATE`. Retrieval here is BM25
(Okapi, ``rank-bm25``) over the whole card text; an LLM can rerank the BM25 candidates (the paper's best
variant reranks ColBERT candidates with an LLM).

Example::

    >>> hits = retrieve_metrics("Summarise news articles", "faithfulness to the article", k=5)  # doctest: +SKIP
    >>> [h.name for h in hits][:2]                                                          # doctest: +SKIP
    ['unieval_summarization_consistency', 'rouge2']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = ["QUERY_TEMPLATE", "RetrievedMetric", "retrieve_metrics", "bm25_rank", "tokenize"]

QUERY_TEMPLATE = (
    'I am looking for a metric to evaluate the following task: "{task}" In particular I care about "{target}".'
)

# Words of the query template itself and common function words carry no signal about a metric.
_STOP = set(
    """a an and are as at be by for from has have i in is it its looking metric metrics of on or
particular that the this to was were will with about care evaluate following task""".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric words without stop words (the BM25 vocabulary)."""
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


@dataclass(frozen=True)
class RetrievedMetric:
    """A retrieved bank metric: its name, BM25 score and rank (0 = best); ``reranked`` when an LLM moved it."""

    name: str
    score: float
    rank: int
    reranked: bool = False


def bm25_rank(query: str, documents: dict[str, str]) -> list[tuple[str, float]]:
    """Rank ``documents`` (name -> text) for ``query`` by BM25 Okapi; ties keep the given order."""
    from pytest_nlgeval.util.extras import require

    BM25Okapi = require("rank_bm25", "retrieving judge examples (BM25)").BM25Okapi

    names = list(documents)
    if not names:
        return []
    corpus = [tokenize(documents[n]) or ["_empty_"] for n in names]
    scores = BM25Okapi(corpus).get_scores(tokenize(query))
    order = sorted(range(len(names)), key=lambda i: (-float(scores[i]), i))
    return [(names[i], float(scores[i])) for i in order]


def retrieve_metrics(
    task: str,
    target: str,
    *,
    k: int = 30,
    names: Sequence[str] | None = None,
    allowed=None,
    rerank_lm=None,
    rerank_k: int | None = None,
) -> list[RetrievedMetric]:
    """The ``k`` bank metrics whose cards best match the task and target.

    ``task`` and ``target`` fill :data:`QUERY_TEMPLATE`. ``k`` is how many BM25 candidates to keep (at least
    1, else :class:`ValueError`). ``names`` are the metrics to search (default: every registered metric with a
    card). ``allowed`` is an optional predicate ``name -> bool`` (e.g. drop reference-based metrics when the
    dataset has no references); it is applied before ranking, so ``k`` counts usable metrics. ``rerank_lm``
    is an optional ``dspy`` LM that reorders the candidates by relevance, and ``rerank_k`` how many to keep
    after reranking (default ``k``).

        hits = retrieve_metrics("Summarise news articles", "faithfulness", k=10)
    """
    from pytest_nlgeval.metrics import CardError, list_metrics, load_card

    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    docs: dict[str, str] = {}
    for name in names if names is not None else list_metrics():
        if allowed is not None and not allowed(name):
            continue
        try:
            docs[name] = load_card(name).text
        except CardError:
            continue  # a metric without a card cannot be retrieved by its card
    query = QUERY_TEMPLATE.format(task=task, target=target)
    ranked = bm25_rank(query, docs)[:k]
    hits = [RetrievedMetric(n, s, i) for i, (n, s) in enumerate(ranked)]
    if rerank_lm is not None and hits:
        hits = llm_rerank(task, target, hits, docs, rerank_lm, keep=rerank_k or k)
    return hits


def llm_rerank(
    task: str, target: str, hits: list[RetrievedMetric], docs: dict[str, str], lm, keep: int
) -> list[RetrievedMetric]:
    """Ask the LLM to order the candidates by usefulness; names it does not return keep their BM25 order."""
    from pytest_nlgeval.llm.cache import require_dspy
    from pytest_nlgeval.metrics import load_card

    dspy: Any = require_dspy()

    class RerankMetrics(dspy.Signature):
        """Order candidate evaluation metrics by how useful they are for the task and the quality the user
        cares about. Return metric names exactly as given, most useful first."""

        task: str = dspy.InputField()
        target: str = dspy.InputField(desc="the quality the user cares about")
        candidates: str = dspy.InputField(desc="one metric per line: name - summary")
        ranking: list[str] = dspy.OutputField(desc="candidate names, most useful first")

    lines = []
    for h in hits:
        summary = load_card(h.name).summary or docs[h.name][:200]
        lines.append(f"{h.name} - {' '.join(summary.split())[:300]}")
    predictor = dspy.Predict(RerankMetrics)
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        try:
            ranking = list(predictor(task=task, target=target, candidates="\n".join(lines)).ranking or [])
        except Exception as exc:  # a failed rerank keeps the BM25 order, and says so
            import warnings

            warnings.warn(f"LLM rerank failed ({type(exc).__name__}: {exc}); keeping the BM25 order")
            return hits[:keep]
    by_name = {h.name: h for h in hits}
    order = [n for n in dict.fromkeys(str(r).strip() for r in ranking) if n in by_name]
    order += [h.name for h in hits if h.name not in order]
    return [
        RetrievedMetric(n, by_name[n].score, i, reranked=(i != by_name[n].rank)) for i, n in enumerate(order[:keep])
    ]
