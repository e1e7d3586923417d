"""A missing optional dependency is a named error that names the extra to install, never a deep ImportError.

Each library is hidden by a ``None`` entry in ``sys.modules``, which makes importing it fail as if it were not
installed.
"""

from __future__ import annotations

import sys

import pytest

from pytest_nlgeval.errors import UsageError
from pytest_nlgeval.util.extras import EXTRAS, MissingExtraError, named_extras, require
from paths import REPO

# comparisons made here land in a recorder of the test's own, not in the session running these tests
pytestmark = pytest.mark.usefixtures("recorder")

EXAMPLE_METRIC = REPO / "examples" / "induced_metric" / "helpful.json"


def _hide(monkeypatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_bank_metric_without_the_metrics_extra(monkeypatch):
    from pytest_nlgeval.metrics import get_metric

    _hide(monkeypatch, "rapidfuzz", "rapidfuzz.distance")
    metric = get_metric("levenshtein")
    with pytest.raises(MissingExtraError) as info:
        metric.score("a cat", references="a hat")
    err = info.value
    assert str(err).startswith("metric 'levenshtein' needs rapidfuzz, which is not installed")
    assert str(err).endswith('pip install "pytest-nlgeval[metrics]"')
    assert err.extra == "metrics" and err.package == "rapidfuzz" and isinstance(err, ImportError)
    assert err.__cause__ is None and err.__suppress_context__  # no chained ModuleNotFoundError traceback


def test_induced_metric_without_the_metrics_extra(monkeypatch):
    from pytest_nlgeval.induction import assert_metric

    _hide(monkeypatch, "rapidfuzz", "rapidfuzz.distance")
    with pytest.raises(MissingExtraError, match=r'needs rapidfuzz.*pip install "pytest-nlgeval\[metrics\]"'):
        assert_metric(
            "Use a USB-C charger.", str(EXAMPLE_METRIC), input="Which charger?", references="Any USB-C charger works."
        )


def test_embeddings_judges_ray_and_induction_name_their_extra(monkeypatch):
    from pytest_nlgeval.llm.cache import JudgesUnavailable, require_dspy
    from pytest_nlgeval.metrics.embedding import load_encoder
    from pytest_nlgeval.scale.ray_engine import RayUnavailable, require_ray

    _hide(
        monkeypatch,
        "sentence_transformers",
        "dspy",
        "ray",
        "ray.data",
        "sklearn",
        "sklearn.cross_decomposition",
        "rank_bm25",
    )
    with pytest.raises(
        MissingExtraError,
        match=r'embedding metrics needs sentence-transformers.*'
        r'pip install "pytest-nlgeval\[embeddings\]"',
    ):
        load_encoder.__wrapped__("/nonexistent/encoder")
    with pytest.raises(JudgesUnavailable, match=r'LLM judges needs dspy.*pip install "pytest-nlgeval\[judges\]"') as j:
        require_dspy()
    assert isinstance(j.value, MissingExtraError) and isinstance(j.value, ImportError)
    with pytest.raises(RayUnavailable, match=r'needs ray\[data\].*pip install "pytest-nlgeval\[ray\]"'):
        require_ray()
    from pytest_nlgeval.induction.regress import fit_pls  # noqa: F401  (module import needs no sklearn)

    with pytest.raises(MissingExtraError, match=r'PLS regression\) needs scikit-learn.*\[metrics\]'):
        require("sklearn.cross_decomposition", "inducing a metric (PLS regression)")
    from pytest_nlgeval.induction.retrieve import bm25_rank

    with pytest.raises(MissingExtraError, match=r"needs rank-bm25"):
        bm25_rank("q", {"a": "text"})


def test_export_without_the_training_extra_is_a_usage_error(monkeypatch, tmp_path, capsys):
    from pytest_nlgeval.cli import main

    _hide(monkeypatch, "nlgeval_training", "nlgeval_training.export")
    assert main(["export", str(tmp_path), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "exporting a model (nlgeval export) needs nlgeval-training" in err
    assert 'pip install "pytest-nlgeval[train]"' in err and "Traceback" not in err


def test_every_extra_named_is_one_the_package_declares():
    import tomllib

    pyproject = REPO / "pyproject.toml"
    declared = set(tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"])
    assert {extra for extra, _ in EXTRAS.values()} <= declared
    # An import error of a library outside the extras is left alone.
    with pytest.raises(ModuleNotFoundError):
        with named_extras("x"):
            import no_such_module_at_all  # noqa: F401
    assert issubclass(MissingExtraError, UsageError)
