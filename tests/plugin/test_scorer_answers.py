"""A part's answer is checked before it counts: a plugin scorer that answers too few readings, a reading out of
[0, 1], infinite or of the wrong type is a named error that names the scorer, never a passing score; and a
reading that is not finite never reaches the score cache."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest

from pytest_nlgeval.core.cache import ScoreCache
from pytest_nlgeval.core.evaluator import Evaluator
from pytest_nlgeval.core.scorers.answers import ScorerAnswerError
from pytest_nlgeval.core.scorers.base import Reading
from pytest_nlgeval.core.scorers.registry import default_scorers

pytestmark = pytest.mark.usefixtures("recorder")

EMBEDDED = Path(__file__).resolve().parents[2] / "runtime" / "nlgeval_runtime" / "embedded"


@pytest.fixture(scope="module")
def plugin_folder(tmp_path_factory) -> Path:
    """The embedded folder (linked) declaring summarization fluency with the plugin scorer ``acme.answer``."""
    folder = tmp_path_factory.mktemp("acme-answer")
    for item in EMBEDDED.iterdir():
        if item.name != "nlgeval.json":
            (folder / item.name).symlink_to(item)
    manifest = json.loads((EMBEDDED / "nlgeval.json").read_text())
    manifest["dimensions"]["serves"]["summarization/fluency"] = {"scorer": "acme.answer", "unit": "sentence"}
    (folder / "nlgeval.json").write_text(json.dumps(manifest))
    return folder


def evaluator_answering(folder, answer, **kwargs) -> Evaluator:
    """An evaluator whose fluency scorer returns ``answer(batch)``."""

    class Answer:
        name, refines = "acme.answer", False

        def score(self, dim, spec, batch, models):
            return answer(batch)

    scorers = default_scorers()
    scorers.add(Answer)
    return Evaluator(folder, scorers=scorers, device="cpu", **{"cache": False, **kwargs})


TWO = ["One sentence here. Another sentence there.", "A third one."]


@pytest.mark.parametrize(
    "answer, said",
    [
        (lambda batch: [[Reading(0.9), Reading(0.9)]], r"1 reading list\(s\) for 2 output\(s\)"),
        (lambda batch: [], r"0 reading list\(s\) for 2 output\(s\)"),
        (lambda batch: [[Reading(0.9)], [Reading(0.9)]], r"1 reading\(s\) for output 0, which has 2 unit"),
        (lambda batch: [[], []], r"0 reading\(s\) for output 0"),
        (lambda batch: None, r"None, not a list"),
    ],
)
def test_a_scorer_that_answers_too_few_readings_is_named(plugin_folder, answer, said):
    ev = evaluator_answering(plugin_folder, answer)
    with pytest.raises(ScorerAnswerError, match=said) as caught:
        ev.evaluate(TWO, "fluency")
    assert "acme.answer" in str(caught.value) and "summarization/fluency" in str(caught.value)


@pytest.mark.parametrize(
    "value, said",
    [
        (7.5, r"the score 7\.5 .*not a probability in \[0, 1\]"),
        (-2.0, r"the score -2\.0"),
        (math.inf, r"the score inf"),
        (math.nan, r"the score nan"),
        (None, r"score is None, not a number"),
        ("0.9", r"score is '0\.9', not a number"),
        (True, r"score is True, not a number"),
    ],
)
def test_a_reading_out_of_range_or_of_the_wrong_type_is_named(plugin_folder, value, said):
    ev = evaluator_answering(plugin_folder, lambda batch: [[Reading(value) for _ in p.units] for p in batch])
    with pytest.raises(ScorerAnswerError, match=said) as caught:
        ev.score("One sentence.", "fluency")
    assert "acme.answer" in str(caught.value)


@pytest.mark.parametrize("value", [0.9, [0.9], {"score": 0.9}])
def test_a_reading_that_is_not_a_reading_is_named(plugin_folder, value):
    ev = evaluator_answering(plugin_folder, lambda batch: [[value for _ in p.units] for p in batch])
    with pytest.raises(ScorerAnswerError, match="not a Reading"):
        ev.score("One sentence.", "fluency")


def test_a_reading_in_range_is_kept_and_a_rounding_slip_clamped(plugin_folder):
    import numpy as np

    ev = evaluator_answering(
        plugin_folder, lambda batch: [[Reading(np.float32(0.25)), Reading(1.0000001)] for p in batch]
    )
    score = ev.score("One sentence here. Another sentence there.", "fluency")
    assert float(score) == pytest.approx((0.25 + 1.0) / 2)
    assert all(isinstance(u["score"], float) for u in score.details["units"])


def test_a_nan_reading_keeps_the_score_cache_on_disk(tmp_path):
    cache = ScoreCache.in_folder(tmp_path / "cache")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CacheWarning: the cache is not degraded
        cache.put_many("ev", {"a": (math.nan, False, 3), "b": (0.5, False, 3), "c": (math.inf, False, 1)})
        cache.put_many("ev", {"d": (0.25, False, 3)})
    assert cache.get_many("ev", ["a", "b", "c", "d"]) == {"b": (0.5, False, 3), "d": (0.25, False, 3)}
    assert cache.count("ev") == 2
    again = ScoreCache.in_folder(tmp_path / "cache")
    assert again.get_many("ev", ["b", "d"]) == {"b": (0.5, False, 3), "d": (0.25, False, 3)}


def test_a_nan_reading_from_a_part_never_reaches_the_cache(plugin_folder, tmp_path):
    """The evaluator's cached path: a compute that answers NaN is an error, and the cache keeps writing."""
    cache = ScoreCache.in_folder(tmp_path / "cache")
    ev = Evaluator(device="cpu", cache=cache)

    def nan_compute(keys):
        return [(math.nan, False, 1) for _ in keys]

    with pytest.raises(ScorerAnswerError, match="nan"):
        ev.cached(["x", "y"], nan_compute)
    with pytest.raises(ScorerAnswerError, match=r"1 answer\(s\) for 2"):
        ev.cached(["x", "y"], lambda keys: [(0.5, False, 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev.cached(["z"], lambda keys: [(0.5, False, 1)])
    assert cache.count() == 1
