"""Ways of scoring are parts: a registry maps the names a model folder declares to scorer classes, and a plugin adds
its own through the ``pytest_nlgeval_register_scorers`` hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nlgeval.core.dimensions import DimensionError
from pytest_nlgeval.core.evaluator import Evaluator
from pytest_nlgeval.core.scorers.base import Reading
from pytest_nlgeval.core.scorers.registry import ScorerRegistry, default_scorers

pytestmark = pytest.mark.usefixtures("recorder")

EMBEDDED = Path(__file__).resolve().parents[2] / "runtime" / "nlgeval_runtime" / "embedded"


class Shortness:
    """Scores each unit 1 / (1 + words / 10): a way of scoring a plugin could bring."""

    name = "acme.shortness"
    refines = False

    def score(self, dim, spec, batch, models):
        return [[Reading(1.0 / (1.0 + len(u.split()) / 10)) for u in planned.units] for planned in batch]


class Halve:
    name = "acme.halve"
    refines = True

    def score(self, dim, spec, batch, models):
        return [[Reading(r.score / 2, support={"findings": ["halved"]}) for r in planned.readings] for planned in batch]


@pytest.fixture(scope="module")
def acme_folder(tmp_path_factory) -> Path:
    """The embedded folder (linked, not copied) declaring summarization fluency with the plugin's scorers."""
    folder = tmp_path_factory.mktemp("acme")
    for item in EMBEDDED.iterdir():
        if item.name != "nlgeval.json":
            (folder / item.name).symlink_to(item)
    manifest = json.loads((EMBEDDED / "nlgeval.json").read_text())
    manifest["dimensions"]["serves"]["summarization/fluency"] = {"scorer": "acme.shortness", "acme.halve": {"by": 2}}
    (folder / "nlgeval.json").write_text(json.dumps(manifest))
    return folder


def test_the_built_in_scorers_by_name():
    scorers = default_scorers()
    assert {"boolqa", "similarity", "related", "informative"} <= set(scorers.names())
    chain = scorers.chain({"scorer": "boolqa", "unit": "claim", "checks": {"cap": 0.2}, "form": {"penalty": 0.5}})
    assert [s.name for s in chain] == ["boolqa", "checks", "form"]
    assert scorers.reads_whole({"scorer": "similarity"}) and not scorers.reads_whole({})


def test_a_registry_refuses_what_is_not_a_scorer_and_names_an_unknown_one():
    scorers = ScorerRegistry()
    with pytest.raises(DimensionError, match="needs a `name`"):
        scorers.add(object)
    scorers.add(Shortness)
    with pytest.raises(DimensionError, match="registered already"):
        scorers.add(type("Other", (Shortness,), {}))
    with pytest.raises(DimensionError, match="declares scorer 'acme.missing', which no installed plugin registers"):
        scorers.get("acme.missing")


def test_a_folder_may_declare_a_plugin_scorer_by_its_package_name(tmp_path):
    from nlgeval_runtime.errors import ModelFormatError
    from nlgeval_runtime.modelfolder import _validate_dimensions

    def fail(msg):
        raise ModelFormatError(msg)

    _validate_dimensions({"serves": {"summarization/fluency": {"scorer": "acme.shortness"}}}, fail)
    with pytest.raises(ModelFormatError, match="unknown scorer 'llm'.*'package.name'"):
        _validate_dimensions({"serves": {"summarization/fluency": {"scorer": "llm"}}}, fail)


def test_an_evaluator_scores_with_the_scorers_it_is_given(acme_folder):
    scorers = default_scorers()
    scorers.add(Shortness)
    scorers.add(Halve)
    ev = Evaluator(acme_folder, scorers=scorers, cache=False, device="cpu")
    score = ev.score("One two three four five.", "fluency")
    assert float(score) == pytest.approx(0.5 / 1.5)
    assert "halved" in "\n".join(score.explanation())
    # every other dimension keeps the folder's own scorers
    plain = Evaluator(cache=False, device="cpu").score("The cat sat.", "coherence", source="The cat sat on the mat.")
    assert float(ev.score("The cat sat.", "coherence", source="The cat sat on the mat.")) == float(plain)
    with pytest.raises(DimensionError, match="acme.shortness"):
        Evaluator(acme_folder, cache=False, device="cpu").score("One two.", "fluency")


def test_a_plugin_registers_its_scorer_through_the_hook(pytester, acme_folder):
    pytester.makeconftest(
        """
        from pytest_nlgeval.core.scorers.base import Reading

        class Shortness:
            name, refines = "acme.shortness", False

            def score(self, dim, spec, batch, models):
                return [[Reading(1.0 / (1.0 + len(u.split()) / 10)) for u in p.units] for p in batch]

        def pytest_nlgeval_register_scorers(scorers):
            scorers.add(Shortness)
        """
    )
    pytester.makepyfile(
        test_short="""
        from pytest_nlgeval import assert_dimension

        def test_short():
            assert assert_dimension("Short and sweet.", "fluency") > 0.7
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", f"--nlgeval-model={acme_folder}", "--nlgeval-no-cache")
    result.assert_outcomes(passed=1)
