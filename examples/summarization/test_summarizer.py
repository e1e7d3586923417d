"""Quality tests of a summariser, the way a team would write them for CI.

Run with ``pytest examples/summarization`` (the embedded evaluator) or choose a model with
``--nlgeval-model MingZhong/unieval-sum``. Every comparison below is an assertion and is recorded for the
report and the baseline. The thresholds are the embedded evaluator's recommended ones (the table in
docs/validity.md: each fails at most one good output in ten on development data and states its catch rate);
a broken summariser (``SUMMARIZER=salad``) fails them. With ``MingZhong/unieval-sum`` teams usually start
around 0.7 and tighten from their baseline.
"""

from __future__ import annotations

import pytest

from summarizer import ARTICLES, lead_summary
from pytest_nlgeval import assert_dimension, assert_dimensions, check_dimension


def test_summary_is_faithful_to_the_article(summarize, article):
    summary = summarize(article["article"])
    # consistency is scored claim by claim: a failure names the weakest claim and what the article says instead;
    # check_dimension asserts the recommended threshold (0.2)
    check_dimension(summary, "consistency", source=article["article"])


def test_summary_reads_fluently(summarize, article):
    check_dimension(summarize(article["article"]), "fluency", above=0.8)


def test_whole_suite_in_one_batch(summarize):
    summaries = [summarize(a["article"]) for a in ARTICLES]
    articles = [a["article"] for a in ARTICLES]
    references = [a["reference"] for a in ARTICLES]
    # one batched call per dimension, then aggregate assertions that name the failing cases
    assert assert_dimensions(summaries, "coherence", sources=articles).mean() > 0.4
    assert assert_dimensions(summaries, "relevance", references=references).fraction(above=0.65) >= 0.75


def test_overall_score(summarize):
    article = ARTICLES[0]
    summary = summarize(article["article"])
    # overall = mean of coherence, consistency, fluency and relevance
    assert assert_dimension(summary, "overall", source=article["article"], reference=article["reference"]) > 0.3


def test_longer_summaries_stay_faithful():
    # the same check for a configuration of the application: three sentences instead of two
    summaries = [lead_summary(a["article"], n_sentences=3) for a in ARTICLES]
    scores = assert_dimensions(summaries, "consistency", sources=[a["article"] for a in ARTICLES])
    assert scores.min() > 0.2


HALLUCINATED = "The Westgate bridge will reopen on Monday. The mayor resigned after the repairs cost 90 million pounds."


def test_a_hallucinated_summary_scores_below_the_faithful_one(summarize):
    article = ARTICLES[0]["article"]
    faithful = assert_dimension(summarize(article), "consistency", source=article)
    # a score can be the threshold of another: the evaluator must prefer the faithful summary
    assert assert_dimension(HALLUCINATED, "consistency", source=article) < faithful


@pytest.mark.xfail(strict=True, reason="demonstration: shows the failure message of a hallucinated summary")
def test_demo_failure_message_of_a_hallucinated_summary():
    article = ARTICLES[0]["article"]
    # An impossible threshold, so the message is always shown: the invented second sentence is the weakest.
    assert assert_dimension(HALLUCINATED, "consistency", source=article) > 0.999
