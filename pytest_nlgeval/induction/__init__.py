"""Metric induction from human labels (AutoMetrics; Ryan et al., 2025), the induced-metric artifact, and
its use as a test threshold and as a reward.

The pipeline: :mod:`.dataset` (labelled outputs) -> :mod:`.judge_generation` (LLM judges generated with
DSPy, run by :mod:`.judges` through the LLM layer :mod:`pytest_nlgeval.llm`) and :mod:`.retrieve` (bank
metrics by their cards) -> :mod:`.regress` (PLS selection and composition) -> :mod:`.robustness`
(sensitivity, stability) -> :mod:`.artifact` (the JSON file) -> :mod:`.assertions`, :mod:`.rewards`,
:mod:`.report_card`, :mod:`.plugin` (the report section).

Example::

    >>> from pytest_nlgeval.induction import load_dataset, induce, InducedMetric    # doctest: +SKIP
    >>> data = load_dataset("answers.jsonl", target="helpfulness")                 # doctest: +SKIP
    >>> induce(data, task="Answer product questions", target="helpfulness").save("helpful.json")  # doctest: +SKIP
    >>> InducedMetric.load("helpful.json")("It works with any USB-C charger.", input="Which charger?")  # doctest: +SKIP

Nothing heavy (numpy, scikit-learn, scipy, dspy) is imported until a function that needs it runs; DSPy is
needed only for LLM judges (``pip install "pytest-nlgeval[judges]"``).
"""

from __future__ import annotations

import importlib

__all__ = [
    "load_dataset",
    "LabelledDataset",
    "DatasetError",
    "induce",
    "InducedMetric",
    "ArtifactError",
    "JudgeParseError",
    "as_dspy_metric",
    "as_reward_fn",
    "assert_metric",
    "make_lm",
    "cached_lm",
    "render_report_card",
]

_WHERE = {
    "load_dataset": "dataset",
    "LabelledDataset": "dataset",
    "DatasetError": "dataset",
    "induce": "pipeline",
    "InducedMetric": "artifact",
    "ArtifactError": "artifact",
    "JudgeParseError": "pytest_nlgeval.llm.errors",
    "as_dspy_metric": "rewards",
    "as_reward_fn": "rewards",
    "assert_metric": "assertions",
    "make_lm": "pytest_nlgeval.llm.cache",
    "cached_lm": "pytest_nlgeval.llm.cache",
    "render_report_card": "report_card",
}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    where = module if module.startswith("pytest_nlgeval.") else f"{__name__}.{module}"
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
