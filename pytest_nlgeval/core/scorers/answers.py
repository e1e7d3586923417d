"""Every scorer's answer is checked before the evaluator aggregates it: one reading list per planned output, one
:class:`~pytest_nlgeval.core.scorers.base.Reading` per unit, each score a finite number in [0, 1].

A scorer is a part the evaluator does not control (a plugin registers its own through
``pytest_nlgeval_register_scorers``): a list too short would leave outputs unscored, and an unscored output
aggregates to 1.0 and passes every gate of its dimension; a logit where a probability belongs (7.5) passes
``> 0.45``. Such an answer is a :class:`ScorerAnswerError` naming the scorer, the dimension and what it
returned, never a score.

    >>> checked_answer(scorer, dim, batch, [[Reading(0.8)]])     # doctest: +SKIP
    [[Reading(score=0.8, ...)]]
"""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING, Any, Sequence

from pytest_nlgeval.core.scorers.base import Planned, Reading
from pytest_nlgeval.errors import NLGEvalError

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["SCORE_SLACK", "ScorerAnswerError", "checked_answer"]

#: how far past [0, 1] a score may stray by rounding (an fp16 sigmoid of 1.0000001) before it is an error; a
#: score within it is clamped into [0, 1]
SCORE_SLACK = 1e-6


class ScorerAnswerError(NLGEvalError, ValueError):
    """A scorer answered what the evaluator cannot aggregate: fewer or more reading lists than outputs, fewer or
    more readings than units, a reading that is not a ``Reading``, or a score that is not a finite number in
    [0, 1]. The message names the scorer, the dimension and what it returned."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _name(scorer: Any) -> str:
    name = getattr(scorer, "name", None)
    cls = type(scorer)
    return f"{name!r} ({cls.__module__}.{cls.__qualname__})" if name else f"{cls.__module__}.{cls.__qualname__}"


def checked_answer(scorer: Any, dim: Dimension, batch: Sequence[Planned], answer: Any) -> list[list[Reading]]:
    """``answer`` (what ``scorer.score(dim, spec, batch, models)`` returned) as one list of readings per planned
    output, each score a float in [0, 1]; raises :class:`ScorerAnswerError` for anything else."""
    where = f"scorer {_name(scorer)} on {dim.key}"

    def refuse(what: str) -> ScorerAnswerError:
        return ScorerAnswerError(
            f"{where} returned {what}; a scorer returns one list of Reading per planned output, one Reading per "
            "unit, each score a probability in [0, 1] (docs/model-folder.md, Scorers). Fix the scorer, or "
            "uninstall the plugin that registers it"
        )

    if isinstance(answer, (str, bytes)) or not isinstance(answer, Sequence):
        try:
            answer = list(answer)
        except TypeError:
            raise refuse(f"{_shown(answer)}, not a list") from None
    if len(answer) != len(batch):
        raise refuse(f"{len(answer)} reading list(s) for {len(batch)} output(s)")
    out: list[list[Reading]] = []
    for k, (planned, readings) in enumerate(zip(batch, answer)):
        if isinstance(readings, (str, bytes)) or not isinstance(readings, Sequence):
            raise refuse(f"{_shown(readings)} for output {planned.case}, not a list of Reading")
        if len(readings) != len(planned.units):
            raise refuse(
                f"{len(readings)} reading(s) for output {planned.case}, which has {len(planned.units)} unit(s)"
            )
        checked: list[Reading] = []
        for u, reading in enumerate(readings):
            at = f"for unit {u} of output {planned.case}"
            if not isinstance(reading, Reading):
                raise refuse(f"{_shown(reading)} {at}, not a Reading")
            score = reading.score
            if isinstance(score, bool) or not isinstance(score, Real):
                raise refuse(f"a Reading {at} whose score is {_shown(score)}, not a number")
            value = float(score)
            if not math.isfinite(value) or not -SCORE_SLACK <= value <= 1.0 + SCORE_SLACK:
                raise refuse(f"the score {value!r} {at}, not a probability in [0, 1] (a logit, or a score unscaled?)")
            if type(score) is not float or not 0.0 <= value <= 1.0:
                reading = Reading(
                    min(1.0, max(0.0, value)), reading.truncated, reading.n_tokens, reading.support, reading.evidence
                )
            checked.append(reading)
        out.append(checked)
    return out
