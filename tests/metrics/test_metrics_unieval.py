"""UniEval dimensions as metrics, on the tiny random T5 model folder; inputs built by hand as in UniEval's public
code, maszhongming/UniEval."""

from __future__ import annotations

import pytest

from pytest_nlgeval.metrics import MetricInputError, get_metric

DOC = "The council approved the budget on Monday. Schools get more money."


@pytest.fixture(scope="module")
def scorer(tiny_t5_model):
    from nlgeval_runtime import load_boolqa

    return load_boolqa(str(tiny_t5_model), device="cpu", threads=1)


def _metric(name, tiny_t5_model, **kw):
    return get_metric(name, model=str(tiny_t5_model), device="cpu", cache=False, **kw)


def _p(scorer, texts):
    return [float(v) for v in scorer.score(texts).scores]


def test_whole_text_dimension_matches_the_hand_built_input(tiny_t5_model, scorer):
    m = _metric("unieval_summarization_coherence", tiny_t5_model)
    assert m.needs_input and not m.needs_references and m.higher_is_better
    out = "The budget passed."
    expected = _p(
        scorer, [f"question: Is this a coherent summary to the document? </s> summary: {out} </s> document: {DOC}"]
    )[0]
    assert m.score(out, input=DOC) == pytest.approx(expected, abs=1e-6)
    assert 0.0 < expected < 1.0


def test_per_sentence_dimension_averages_sentences(tiny_t5_model, scorer):
    m = _metric("unieval_summarization_consistency", tiny_t5_model)
    s1, s2 = "The council approved the budget.", "Schools lose money."
    q = "question: Is this claim consistent with the document? </s> claim: {} </s> document: " + DOC
    a, b = _p(scorer, [q.format(s1), q.format(s2)])
    assert m.score(f"{s1} {s2}", input=DOC) == pytest.approx((a + b) / 2, abs=1e-6)


def test_dialogue_engagingness_sums_sentences_and_reads_the_fact_from_context(tiny_t5_model, scorer):
    m = _metric("unieval_dialogue_engagingness", tiny_t5_model)
    assert m.needs_input and m.needs_context and m.uses_context
    hist, fact = "Hi!\nDo you like football?", "Football is played by two teams of eleven."
    r1, r2 = "Yes, I love it.", "Each team has eleven players."
    q = (
        "question: Is this an engaging and informative response according to the dialogue history and fact? "
        "</s> response: {} </s> dialogue history: " + hist + "\n\n </s> fact: " + fact + "\n"
    )
    a, b = _p(scorer, [q.format(r1), q.format(r2)])
    assert m.score(f"{r1} {r2}", input=hist, context=fact) == pytest.approx(a + b, abs=1e-6)
    with pytest.raises(MetricInputError, match="needs the context"):
        m.score(r1, input=hist)


def test_relevance_averages_over_references(tiny_t5_model, scorer):
    out, refs = "The budget passed.", ["Council passes budget.", "Schools get money."]
    q = "question: Is this summary relevant to the reference? </s> summary: {} </s> reference: {}"
    a, b = _p(scorer, [q.format(out, r) for r in refs])
    mean = _metric("unieval_summarization_relevance", tiny_t5_model)
    assert mean.needs_references and not mean.needs_input
    assert mean.score(out, references=refs) == pytest.approx((a + b) / 2, abs=1e-6)
    assert _metric("unieval_summarization_relevance", tiny_t5_model, multi_ref="max").score(
        out, references=refs
    ) == pytest.approx(max(a, b), abs=1e-6)
    assert _metric("unieval_summarization_relevance", tiny_t5_model, multi_ref="first").score(
        out, references=refs
    ) == pytest.approx(a, abs=1e-6)


def test_batch_equals_single_and_signature_has_the_fingerprint(tiny_t5_model):
    m = _metric("unieval_summarization_fluency", tiny_t5_model)
    outs = ["The cat sat.", "Dogs bark loudly. Birds sing."]
    assert m.score_batch(outs) == pytest.approx([m.score(o) for o in outs], abs=1e-9)
    assert (
        m.signature
        == f"unieval_summarization_fluency|task:summarization|dim:fluency|evaluator:{m.evaluator.fingerprint_id}"
    )


def test_input_errors_are_metric_errors(tiny_t5_model):
    m = _metric("unieval_summarization_coherence", tiny_t5_model)
    with pytest.raises(MetricInputError, match="needs the input"):
        m.score("A summary.")
    with pytest.raises(MetricInputError, match="empty"):
        m.score("   ", input=DOC)


def test_unknown_dimension_fails_at_construction():
    from pytest_nlgeval.metrics.unieval import UniEvalDimension

    with pytest.raises(ValueError):
        UniEvalDimension(task="summarization", dimension="politeness")
