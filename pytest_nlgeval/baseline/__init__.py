"""Regression baselines: store every check's score, compare a later run with it, fail CI on a real drop.

Layout: :mod:`.store` (the baseline file: format, validation, atomic writes), :mod:`.tolerances`,
:mod:`.bootstrap` (paired bootstrap of a mean change), :mod:`.compare` (per-check and per-suite verdicts),
:mod:`.render` (terminal and Markdown), :mod:`.plugin` (pytest options and hooks). Nothing here imports
numpy until a suite is bootstrapped. Example::

    from pytest_nlgeval.baseline import Baseline, compare, load_baseline, load_snapshot

    comparison = compare(load_baseline("nlgeval-baseline.json"), load_snapshot("results.json"))
    if comparison.failed:
        print([v.key for v in comparison.regressions])
"""
from pytest_nlgeval.baseline.compare import CheckVerdict, Comparison, SuiteVerdict, compare
from pytest_nlgeval.baseline.errors import BaselineError, BaselineFormatError, EvaluatorMismatchError
from pytest_nlgeval.baseline.store import Baseline, BaselineEntry, load_baseline, load_snapshot, write_baseline
from pytest_nlgeval.baseline.tolerances import Tolerances

__all__ = [
    "Baseline", "BaselineEntry", "BaselineError", "BaselineFormatError", "CheckVerdict", "Comparison",
    "EvaluatorMismatchError", "SuiteVerdict", "Tolerances", "compare", "load_baseline", "load_snapshot",
    "write_baseline",
]
