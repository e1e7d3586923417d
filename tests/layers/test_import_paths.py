"""The core lives in pytest_nlgeval/core/ (and nowhere else) and meta-evaluation in pytest_nlgeval/metaeval/;
the names users import are at the package root, and the plugin loads none of the core until it is used."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

CORE = ["cache", "checks", "dimensions", "evaluator", "run", "score", "windows"]


@pytest.mark.parametrize("name", CORE)
def test_the_core_lives_in_one_place_only(name):
    importlib.import_module(f"pytest_nlgeval.core.{name}")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"pytest_nlgeval.{name}")


def test_the_names_users_import_are_at_the_package_root():
    from pytest_nlgeval import Check, Dimension, DimensionRegistry, Evaluator, Score, ScoreList
    from pytest_nlgeval.core.evaluator import DEFAULT_CACHE_DIR

    assert DEFAULT_CACHE_DIR == ".nlgeval-cache"
    assert {
        Check.__module__,
        DimensionRegistry.__module__,
        ScoreList.__module__,
        Evaluator.__module__,
        Dimension.__module__,
        Score.__module__,
    } == {
        "pytest_nlgeval.core.checks",
        "pytest_nlgeval.core.dimensions",
        "pytest_nlgeval.core.score",
        "pytest_nlgeval.core.evaluator",
    }


def test_meta_evaluation_names_are_importable_from_the_package():
    import pytest_nlgeval.metaeval as metaeval
    from pytest_nlgeval.metaeval import protocol, records, statistics, values

    for name in metaeval.__all__:
        assert hasattr(metaeval, name), name
    assert metaeval.meta_evaluate is protocol.meta_evaluate and metaeval.correlate is statistics.correlate
    assert metaeval.Record is records.Record and metaeval.evaluator_values is values.evaluator_values
    assert not [n for n in vars(metaeval) if n.startswith("_") and not n.startswith("__")], (
        "private names stay in their module"
    )


def test_the_plugin_loads_no_core_module_but_the_light_ones():
    code = (
        "import sys, pytest_nlgeval, pytest_nlgeval.plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('pytest_nlgeval.core')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_user_facing_error_derives_from_nlgeval_error():
    """``except NLGEvalError`` catches every error the package raises on purpose (errors.py says so)."""
    import pkgutil

    import pytest_nlgeval
    from pytest_nlgeval.errors import NLGEvalError

    skip = (
        "pytest_nlgeval.scale.ray_engine",
        "pytest_nlgeval.induction.judges",
        "pytest_nlgeval.induction.judge_generation",
    )  # need optional extras
    found = {}
    for info in pkgutil.walk_packages(pytest_nlgeval.__path__, "pytest_nlgeval."):
        if info.name.startswith(skip) or info.name.endswith((".plugin", "__main__")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, Exception)
                and not name.startswith("_")
                and value.__module__.startswith("pytest_nlgeval")
                and not issubclass(value, Warning)
            ):
                found[f"{value.__module__}.{name}"] = value
    assert len(found) >= 25
    outside = sorted(k for k, v in found.items() if not issubclass(v, NLGEvalError))
    assert not outside, outside


def test_the_public_names_are_the_lazy_names_and_only_grow():
    import pytest_nlgeval

    assert set(pytest_nlgeval.__all__) == {"__version__", *pytest_nlgeval._LAZY}
    released = {
        "__version__",
        "assert_dimension",
        "assert_dimensions",
        "Score",
        "ScoreList",
        "Evaluator",
        "Dimension",
        "DimensionRegistry",
        "Check",
        "assert_metric",
        "assert_metrics",
        "assert_trajectory",
    }
    assert released <= set(pytest_nlgeval.__all__), "a public name went away"
    for name in pytest_nlgeval.__all__:
        assert getattr(pytest_nlgeval, name) is not None
