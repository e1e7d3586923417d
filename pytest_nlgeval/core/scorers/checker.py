"""Claim support by an external fact checker: MiniCheck or HHEM-2.1-Open, read as their authors read them.

``Evaluator(fact_checker=PATH)`` (``--nlgeval-fact-checker PATH``) points the fact dimensions at a claim-support
folder that ``nlgeval export`` wrote (:mod:`nlgeval_runtime.claim_support`): the claims of summarization and fact
consistency and of rag faithfulness are scored by :class:`ClaimSupport` (the checker's own chunking and max over
chunks), and the claims a dialogue reply makes about its fact are read by the checker in groundedness's claim
check. :func:`with_checker` rewrites those dimensions' declarations; every other dimension keeps the folder's.
The explicit checks still hold each claim to its aligned source units (:mod:`.claims`).

    >>> spec = {"scorer": "boolqa", "unit": "claim", "checks": {"intercept": -6.1, "weights": {...}}}
    >>> with_checker(spec, "models/minicheck")["scorer"]                    # doctest: +SKIP
    'claim_support'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_nlgeval.core.scorers.base import Models, Planned, Reading
from pytest_nlgeval.core.scorers.boolqa import source_parts
from pytest_nlgeval.core.scorers.similarity import PAIR
from pytest_nlgeval.core.windows import alignment_units

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["ClaimSupport", "read_claims", "with_checker"]


#: the dimensions whose units a fact checker reads in a folder that declares nothing (a released UniEval checkpoint)
FACT_DIMENSIONS = ("summarization/consistency", "fact/consistency", "rag/faithfulness")


def with_checker(spec: dict, checker: str, key: str | None = None) -> dict:
    """``spec`` (the declaration of the dimension ``key``) with its claims read by the fact checker folder
    ``checker``; a dimension that reads no claims is returned as it is. In a folder without a declaration
    (``spec`` empty) the units of the fact dimensions (:data:`FACT_DIMENSIONS`) are read by the checker."""
    if not spec and key in FACT_DIMENSIONS:
        return {"scorer": ClaimSupport.name, "checker": checker}
    if spec.get("checks"):
        kept = {k: v for k, v in spec.items() if k not in ("cascade", "folder")}
        return {**kept, "scorer": ClaimSupport.name, "checker": checker}
    if spec.get("fact_checks"):
        return {**spec, "fact_checks": {**spec["fact_checks"], "checker": checker}}
    return spec


class ClaimSupport:
    """Each claim's support by its source under the checker of the entry's ``checker`` folder: the max over the
    source's chunks (the chunk that decided is named); its evidence for the explicit checks is the source units
    it shares most words with, as the Boolean-QA scorer aligns them."""

    name = "claim_support"
    refines = False

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        checker = open_checker(spec["checker"], models)
        parts = [(source_parts(dim, planned.values), unit) for planned in batch for unit in planned.units]
        read = iter(_read(checker, [(body, claim) for (_, body, _), claim in parts], models))
        top = int(spec.get("top_units", 6))
        out: list[list[Reading]] = [[] for _ in batch]
        for readings, ((_, body, tail), unit) in zip((out[k] for k, p in enumerate(batch) for _ in p.units), parts):
            score, truncated, n_tokens, chunks, best = next(read)
            evidence = alignment_units(unit, body, top=top, tail=tail) if models.source_windows != "off" else None
            found = f"{checker.name}: support {score:.4f}, the best of {len(chunks)} chunk(s) of the source"
            support = {
                "index": best,
                "count": len(chunks),
                "text": chunks[best] if chunks else "",
                "score": score,
                "checker": checker.name,
                "aggregation": "max",
                "findings": [found],
            }
            readings.append(Reading(score, truncated, n_tokens, support, evidence))
        return out


def open_checker(path: str, models: Models):
    """The claim checker of the folder ``path``, loaded once per evaluator on its device and precision."""

    def load():
        from nlgeval_runtime.claim_support import load_claim_checker

        return load_claim_checker(path, device=models.device, precision=models.precision, threads=models.threads)

    return models.resource(("claim-support", str(path)), load)


def read_claims(path: str, pairs: list[tuple[str, str]], models: Models) -> list[tuple[float, dict]]:
    """``(support, how it was read)`` of each ``(document, claim)`` pair under the checker of ``path``."""
    checker = open_checker(path, models)
    reading = {"checker": checker.name, "supported_from": checker.supported_from}
    return [(score, reading) for score, *_ in _read(checker, pairs, models)]


def _read(checker, pairs: list[tuple[str, str]], models: Models) -> list[tuple[float, bool, int, list[str], int]]:
    """``(support, truncated, tokens, chunks, best chunk)`` per pair; each (chunk, claim) input cached by its text."""
    chunked = [checker.chunks(document) for document, _ in pairs]
    texts = [checker.input_text(chunk, claim) for chunks, (_, claim) in zip(chunked, pairs) for chunk in chunks]

    def compute(keys: list[str]) -> list[tuple[float, bool, int]]:
        scores, truncated, n_tokens = checker.score_texts([k.split(PAIR, 1)[1] for k in keys])
        return [(float(s), bool(t), int(n)) for s, t, n in zip(scores, truncated, n_tokens)]

    flat = iter(models.cached([f"claim support{PAIR}{t}" for t in texts], compute))
    out = []
    for chunks in chunked:
        results = [next(flat) for _ in chunks]
        best = max(range(len(results)), key=lambda k: results[k][0]) if results else 0
        score = results[best][0] if results else 0.0
        out.append((score, any(r[1] for r in results), max((r[2] for r in results), default=0), chunks, best))
    return out
