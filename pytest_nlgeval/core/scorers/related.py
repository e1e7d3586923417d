"""Related and informative: a unit's calibrated relation to the texts its declaration names.

``related`` (summarization relevance, data-to-text informativeness): the mean log-odds of the calibrated cosines
of the unit with each text ``against`` names that the call gives (the reference, the document), through the
sigmoid: the summary keeps what the reference and the document say matters. ``informative`` (dialogue
engagingness, "an engaging and informative response according to the dialogue history and fact", UniEval's
question): per sentence, the best of them, times how much the sentence says, 1 - exp(-content words /
``content_scale``), summed over sentences by the dimension's aggregation.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_nlgeval.core.dimensions import _check_text, prepare_fields
from pytest_nlgeval.core.scorers.base import Models, Planned, Reading
from pytest_nlgeval.core.scorers.similarity import log_odds, pair_key, sigmoid

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["Informative", "Related"]


class Related:
    """The sigmoid of the mean calibrated log-odds against the named texts that were given."""

    name = "related"
    refines = False

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        return [
            [self.combine(column, unit, spec) for column, unit in zip(zip(*log_odds_of), planned.units)]
            for planned, log_odds_of in zip(batch, _log_odds(dim, spec, batch, models))
        ]

    @staticmethod
    def combine(column: tuple[float, ...], unit: str, spec: dict) -> Reading:
        return Reading(sigmoid(sum(column) / len(column)))


class Informative(Related):
    """The best calibrated relation to the named texts, times how much the unit says."""

    name = "informative"

    @staticmethod
    def combine(column: tuple[float, ...], unit: str, spec: dict) -> Reading:
        from nlgeval_runtime.claims import content_words

        scale = float(spec.get("content_scale", 5.0))
        return Reading(sigmoid(max(column)) * (1.0 - math.exp(-len(content_words(unit)) / scale)))


def _log_odds(dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[list[float]]]:
    """Per planned output, per named text given: each unit's calibrated log-odds (one cached encoder call)."""
    keys = [_related_keys(dim, spec, planned.units, planned.values) for planned in batch]
    unique = list(dict.fromkeys(k for by_argument in keys for pairs in by_argument.values() for k in pairs))
    cosines = dict(zip(unique, models.similarities(unique, spec["folder"])))
    return [
        [[log_odds(spec["against"][a], cosines[k], k) for k in pairs] for a, pairs in by_argument.items()]
        for by_argument in keys
    ]


def _related_keys(dim: Dimension, spec: dict, units: list[str], values: dict) -> dict[str, list[str]]:
    """The sentence-encoder pairs of the units: for each text the declaration names (``against``: argument ->
    calibration) that the call gives, one pair key per unit."""
    fields = prepare_fields(dim, values)
    for argument in spec["against"]:
        if argument not in fields and values.get(argument) is not None:
            fields[argument] = _check_text(values[argument], f"`{argument}=`")
    return {
        argument: [pair_key(dim, unit, fields[argument]) for unit in units]
        for argument in spec["against"]
        if argument in fields
    }
