"""Sentence-encoder similarity: the calibrated cosine of a unit and the text it answers.

A dimension declared ``"scorer": "similarity"`` compares each unit (the output, or each retrieved passage) with
its first input (the question, the dialogue history) under the sentence encoder of a sub-folder, and maps the
cosine to the relevance scale: sigmoid(scale cosine + offset [+ lexical share]), as the folder's
``calibration`` says (fitted by ``nlgeval-train calibrate-relevance`` on pseudo-labelled pairs). ``Evasive`` caps
an answer that only hedges (Ragas' noncommittal flag).

    >>> _calibrated({"scale": 9.0, "offset": -3.6}, 0.5)    # doctest: +ELLIPSIS
    0.71...
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_nlgeval.core.dimensions import prepare_fields
from pytest_nlgeval.core.scorers.base import Models, Planned, Reading

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["EVASIVE_CAP", "PAIR", "Evasive", "Similarity", "pair_key"]

#: separates the parts of a sentence-encoder pair's cache key (never in user text: a control character)
PAIR = "\x1f"
#: the most an evasive answer scores on a dimension declared with ``evasive`` (rag answer relevance)
EVASIVE_CAP = 0.2


class Similarity:
    """The calibrated cosine of each unit and the dimension's first input (``best_sentence``: its best sentence)."""

    name = "similarity"
    refines = False
    reads_whole = True  # a sentence encoder reads its texts whole (cut at its maximum length), never in windows

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        keys = [_similarity_keys(dim, planned.units, planned.values) for planned in batch]
        flat = [k for case in keys for k in case]
        cosines = iter(models.similarities(flat, spec["folder"], best_sentence=bool(spec.get("best_sentence"))))
        return [[Reading(_calibrated(spec["calibration"], next(cosines), k)) for k in case] for case in keys]


class Evasive:
    """An answer that declines to answer does not address the question, however close its words are to it: such a
    unit scores at most :data:`EVASIVE_CAP` (declared with ``"evasive": true``)."""

    name = "evasive"
    refines = True

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        from nlgeval_runtime.claims import is_evasive

        if dim.unit == "claim" and spec.get("checks"):
            return [planned.readings for planned in batch]  # a claim is judged by its explicit checks instead
        return [
            [
                Reading(min(r.score, EVASIVE_CAP), r.truncated, r.n_tokens, {"evasive": _EVASIVE}, r.evidence)
                if is_evasive(unit)
                else r
                for unit, r in zip(planned.units, planned.readings)
            ]
            for planned in batch
        ]


_EVASIVE = "the answer declines to answer (a hedge, no content)"


def _similarity_keys(dim: Dimension, units: list[str], values: dict) -> list[str]:
    """Cache keys of a similarity dimension's units: the question asked, the unit, the text it is compared with
    (the dimension's first field after the output, e.g. the question)."""
    other = prepare_fields(dim, values)[dim.arguments[0]]
    return [pair_key(dim, unit, other) for unit in units]


def pair_key(dim: Dimension, unit: str, other: str) -> str:
    """The cache key of one (unit, other text) pair of a sentence-encoder dimension;
    :meth:`~pytest_nlgeval.core.evaluator.Evaluator.similarities` splits it back into the two texts."""
    return f"similarity {dim.question}{PAIR}{unit.strip()}{PAIR}{other.strip()}"


def _calibrated(calibration: dict, cosine: float, key: str | None = None) -> float:
    """sigmoid(scale * cosine + offset [+ lexical * share of the unit's content words in the other text]): a cosine
    on the relevance scale (the folder's declaration; ``key`` is the pair, see :func:`pair_key`)."""
    return sigmoid(log_odds(calibration, cosine, key))


def log_odds(calibration: dict, cosine: float, key: str | None = None) -> float:
    z = float(calibration["scale"]) * cosine + float(calibration["offset"])
    if calibration.get("lexical") and key is not None:
        from nlgeval_runtime.factcheck import lexical_support

        _, unit, other = key.split(PAIR, 2)
        z += float(calibration["lexical"]) * lexical_support(unit, other)
    return z


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
