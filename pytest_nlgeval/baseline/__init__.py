"""Regression baselines: store every check's score, compare a later run with it, fail CI on a real drop.

Layout: :mod:`.store` (the baseline file: format, validation, atomic writes), :mod:`.tolerances`,
:mod:`.bootstrap` (paired bootstrap of a mean change), :mod:`.compare` (per-check and per-suite verdicts),
:mod:`.render` (terminal and Markdown), :mod:`.plugin` (pytest options and hooks). Nothing here imports
numpy until a suite is bootstrapped. Example::

    from pytest_nlgeval.baseline import load_baseline, load_snapshot
    from pytest_nlgeval.baseline.compare import compare

    comparison = compare(load_baseline("nlgeval-baseline.json"), load_snapshot("results.json"))
    if comparison.failed:
        print([v.key for v in comparison.regressions])
"""

from __future__ import annotations

import importlib

_LAZY = {
    "CheckVerdict": "compare",
    "Comparison": "compare",
    "SuiteVerdict": "compare",
    "BaselineError": "errors",
    "BaselineFormatError": "errors",
    "EvaluatorMismatchError": "errors",
    "Baseline": "store",
    "BaselineEntry": "store",
    "load_baseline": "store",
    "load_snapshot": "store",
    "write_baseline": "store",
    "Tolerances": "tolerances",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    # Lazy: the pytest plugin module lives in this package, and loading it must not load the comparison.
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
