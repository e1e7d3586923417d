"""Quality tests of a data-to-text generator (UniEval's data2text task: naturalness, informativeness).

data2text never uses the source data itself: informativeness compares the text with a human reference.
"""

from __future__ import annotations

import pytest

from restaurant_realiser import RESTAURANTS
from pytest_nlgeval import assert_dimension, assert_dimensions


@pytest.mark.nlgeval(task="data2text")
def test_description_is_natural(describe, restaurant):
    # the realiser's sentences score above 0.8 with the embedded model, their word salad below 0.01
    assert assert_dimension(describe(restaurant["mr"]), "naturalness") > 0.6


def test_description_is_informative(describe, restaurant):
    text = describe(restaurant["mr"])
    assert assert_dimension(text, "informativeness", task="data2text", reference=restaurant["reference"]) > 0.85


def test_all_descriptions_in_one_batch(nlgeval, describe):
    texts = [describe(r["mr"]) for r in RESTAURANTS]
    references = [r["reference"] for r in RESTAURANTS]
    scores = assert_dimensions(texts, "overall", task="data2text", references=references)
    assert scores.mean() > 0.3
    # the same numbers, without assertions, e.g. for a dashboard
    plain = nlgeval.score_batch(texts, "naturalness", task="data2text")
    assert len(plain) == len(texts) and all(0.0 <= value <= 1.0 for value in plain)


@pytest.mark.xfail(strict=True, reason="demonstration: shows the failure message of a list aggregate")
def test_demo_failure_message_of_an_aggregate(describe):
    texts = [describe(r["mr"]) for r in RESTAURANTS] + ["name eatType food area the the the"]
    assert assert_dimensions(texts, "naturalness", task="data2text").fraction(above=0.999) >= 0.9
