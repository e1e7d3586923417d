"""The core lives in pytest_nlgeval/core/ and meta-evaluation in pytest_nlgeval/metaeval/; every path users
and the docs import from keeps working, and the plugin still loads none of the core until it is used."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

CORE = ["cache", "checks", "context", "dimensions", "evaluator", "score", "windows"]


@pytest.mark.parametrize("name", CORE)
def test_a_former_core_path_is_the_core_module(name):
    assert importlib.import_module(f"pytest_nlgeval.{name}") is importlib.import_module(f"pytest_nlgeval.core.{name}")


def test_the_names_users_import_are_where_they_were():
    from pytest_nlgeval import Check, Dimension, DimensionRegistry, Evaluator, Score, ScoreList
    from pytest_nlgeval.cache import ScoreCache
    from pytest_nlgeval.dimensions import Dimension as D2
    from pytest_nlgeval.evaluator import DEFAULT_CACHE_DIR, Evaluator as E2
    from pytest_nlgeval.score import Score as S2

    assert (Evaluator, Dimension, Score) == (E2, D2, S2) and DEFAULT_CACHE_DIR == ".nlgeval-cache"
    assert {Check.__module__, DimensionRegistry.__module__, ScoreList.__module__, ScoreCache.__module__} == {
        "pytest_nlgeval.core.checks", "pytest_nlgeval.core.dimensions", "pytest_nlgeval.core.score",
        "pytest_nlgeval.core.cache"}


def test_meta_evaluation_names_are_importable_from_the_package():
    import pytest_nlgeval.metaeval as metaeval
    from pytest_nlgeval.metaeval import protocol, records, statistics, values

    for name in metaeval.__all__:
        assert hasattr(metaeval, name), name
    assert metaeval.meta_evaluate is protocol.meta_evaluate and metaeval.correlate is statistics.correlate
    assert metaeval.Record is records.Record and metaeval.evaluator_values is values.evaluator_values
    assert metaeval._fast_corr3 is statistics._fast_corr3 and metaeval._dimensions is protocol._dimensions


def test_the_plugin_loads_no_core_module_but_the_light_ones():
    code = ("import sys, pytest_nlgeval, pytest_nlgeval.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('pytest_nlgeval.core')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
