"""pytest-nlgeval: quality tests for text-generating applications, as pytest assertions.

    from pytest_nlgeval import check_dimension

    def test_summary_is_faithful(summarize, article):
        check_dimension(summarize(article), "consistency", source=article)  # > 0.2, the recommended threshold

Names are imported on first use, so ``import pytest_nlgeval`` loads no model runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_LAZY = {
    "assert_dimension": "pytest_nlgeval.assertions",
    "assert_dimensions": "pytest_nlgeval.assertions",
    "assert_score": "pytest_nlgeval.assertions",
    "check_dimension": "pytest_nlgeval.assertions",
    "recommended_threshold": "pytest_nlgeval.core.thresholds",
    "Score": "pytest_nlgeval.core.score",
    "ScoreList": "pytest_nlgeval.core.score",
    "Evaluator": "pytest_nlgeval.core.evaluator",
    "Dimension": "pytest_nlgeval.core.dimensions",
    "DimensionRegistry": "pytest_nlgeval.core.dimensions",
    "Check": "pytest_nlgeval.core.checks",
    "assert_metric": "pytest_nlgeval.induction.assertions",
    "assert_metrics": "pytest_nlgeval.induction.assertions",
    "assert_trajectory": "pytest_nlgeval.trajectory.assertions",
    "assert_judged": "pytest_nlgeval.assertions",
    "JudgedParseError": "pytest_nlgeval.judges.criterion",
    "samples": "pytest_nlgeval.core.sampling",
    "Samples": "pytest_nlgeval.core.sampling",
}

__all__ = [  # every lazy name, spelled out for readers and linters (a test keeps the two equal)
    "__version__",
    "assert_dimension",
    "assert_dimensions",
    "assert_score",
    "check_dimension",
    "recommended_threshold",
    "Score",
    "ScoreList",
    "Evaluator",
    "Dimension",
    "DimensionRegistry",
    "Check",
    "assert_metric",
    "assert_metrics",
    "assert_trajectory",
    "assert_judged",
    "JudgedParseError",
    "samples",
    "Samples",
]

if TYPE_CHECKING:  # pragma: no cover
    from pytest_nlgeval.assertions import assert_dimension, assert_dimensions, assert_score, check_dimension
    from pytest_nlgeval.core.thresholds import recommended_threshold
    from pytest_nlgeval.core.checks import Check
    from pytest_nlgeval.core.dimensions import Dimension, DimensionRegistry
    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.core.score import Score, ScoreList
    from pytest_nlgeval.assertions import assert_judged
    from pytest_nlgeval.judges.criterion import JudgedParseError
    from pytest_nlgeval.core.sampling import Samples, samples


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_nlgeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
