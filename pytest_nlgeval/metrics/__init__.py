"""The metric bank: existing NLG metrics behind one small protocol, each with a metric card.

Nothing heavy is imported here; each metric imports its library (sacrebleu, rouge-score, rapidfuzz,
sentence-transformers, the ONNX runtime) the first time it is constructed or scored.

Example::

    >>> from pytest_nlgeval.metrics import get_metric, load_card
    >>> rouge = get_metric("rouge2")
    >>> round(rouge.score("the cat sat on the mat", references=["the cat sat on a mat"]), 3)
    0.6
    >>> load_card("rouge2").sections["Metric Details"][:40]  # doctest: +ELLIPSIS
    '...'
"""

from pytest_nlgeval.metrics.base import Metric, MetricInputError, MetricResult, MetricUnavailableError
from pytest_nlgeval.metrics.cards import REQUIRED_SECTIONS, CardError, MetricCard, load_card, load_cards
from pytest_nlgeval.metrics.registry import (
    UnknownMetricError,
    get_metric,
    list_metrics,
    register_metric,
    unregister_metric,
)

__all__ = [
    "Metric",
    "MetricResult",
    "MetricInputError",
    "MetricUnavailableError",
    "MetricCard",
    "CardError",
    "REQUIRED_SECTIONS",
    "load_card",
    "load_cards",
    "get_metric",
    "list_metrics",
    "register_metric",
    "unregister_metric",
    "UnknownMetricError",
]
