"""The dialogue dimensions of the embedded default model on realistic cases (tests/data/dialogue_pairs.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CASES = json.loads((Path(__file__).resolve().parents[1] / "data" / "dialogue_pairs.json").read_text())["cases"]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    return Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))


def _scores(evaluator, case, dimension, bad):
    values = evaluator.score_batch(
        [case["good"], case[bad]], dimension, task="dialogue", context=case["history"], fact=case["fact"]
    )
    return values[0], values[1]


@pytest.mark.parametrize("case", CASES, ids=[c["fact"].split()[0] for c in CASES])
@pytest.mark.parametrize("dimension", ["coherence", "groundedness", "naturalness"])
def test_the_reply_of_another_conversation_scores_lower(evaluator, case, dimension):
    good, bad = _scores(evaluator, case, dimension, "other")
    assert good - bad >= 0.2, (dimension, good, bad)


@pytest.mark.parametrize("case", CASES, ids=[c["fact"].split()[0] for c in CASES])
def test_a_generic_reply_is_less_engaging(evaluator, case):
    good, bad = _scores(evaluator, case, "engagingness", "generic")
    assert good - bad >= 0.2, (good, bad)


def test_every_dialogue_dimension_is_served(evaluator):
    case = CASES[0]
    for dimension in ("naturalness", "coherence", "engagingness", "groundedness", "understandability"):
        score = evaluator.score(case["good"], dimension, task="dialogue", context=case["history"], fact=case["fact"])
        assert 0.0 <= float(score) <= 2.0
    # naturalness without a history is the text model's answer alone (no error)
    assert 0.0 <= float(evaluator.score(case["good"], "naturalness", task="dialogue")) <= 1.0
