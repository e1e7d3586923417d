"""The metric protocol: registry, validation, signatures, feedback, laziness."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_nlgeval.metrics import (
    Metric,
    MetricInputError,
    MetricResult,
    UnknownMetricError,
    get_metric,
    list_metrics,
    register_metric,
    unregister_metric,
)

HEAVY = (
    "sacrebleu",
    "rouge_score",
    "rapidfuzz",
    "torch",
    "sentence_transformers",
    "onnxruntime",
    "scipy",
    "numpy",
    "nltk",
    "transformers",
)


def test_importing_the_bank_imports_no_metric_library():
    code = (
        "import sys, json, pytest_nlgeval.metrics as m; m.list_metrics(); m.load_card('rouge2'); "
        f"print(json.dumps(sorted(k for k in sys.modules if k.split('.')[0] in {HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_constructing_a_lexical_metric_does_not_import_torch():
    code = (
        "import sys, json; from pytest_nlgeval.metrics import get_metric; "
        "[get_metric(n).score('a b c', references=['a b d']) for n in ('rouge2', 'bleu', 'chrf_pp', 'levenshtein')]; "
        "print(json.dumps(sorted(k for k in sys.modules "
        "if k.split('.')[0] in ('torch', 'sentence_transformers', 'onnxruntime'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_registry_lists_every_family():
    names = list_metrics()
    for expected in (
        "rouge1",
        "rouge2",
        "rougeL",
        "bleu",
        "chrf",
        "chrf_pp",
        "ter",
        "meteor",
        "levenshtein",
        "word_edit_rate",
        "distinct_1",
        "distinct_2",
        "self_bleu",
        "length",
        "compression_ratio",
        "fkgl",
        "embedding_cosine",
        "bertscore_minilm",
        "unieval_summarization_consistency",
        "unieval_dialogue_engagingness",
        "perplexity",
    ):
        assert expected in names
    assert len(names) == len(set(names))


def test_unknown_metric_suggests_close_names():
    with pytest.raises(UnknownMetricError, match="did you mean.*rouge2"):
        get_metric("rogue2")


def test_unknown_option_names_the_accepted_ones():
    with pytest.raises(TypeError, match=r"no option 'stemming'.*use_stemmer"):
        get_metric("rouge2", stemming=True)


def test_bad_option_value_is_a_clear_error():
    with pytest.raises(ValueError, match="multi_ref"):
        get_metric("rouge2", multi_ref="median")


def test_instances_report_the_name_they_were_asked_by():
    assert get_metric("rougeL").name == "rougeL"
    assert get_metric("distinct_3").name == "distinct_3"
    assert get_metric("chrf").name == "chrf" and get_metric("chrf_pp").name == "chrf_pp"


def test_signature_states_options_and_library_version():
    from importlib import metadata

    sig = get_metric("rouge2", multi_ref="mean", use_stemmer=True).signature
    assert sig == f"rouge2|measure:f|stem:yes|refs:mean|rouge-score:{metadata.version('rouge-score')}"
    bleu = get_metric("bleu", lowercase=True).signature
    assert "case:lc" in bleu and f"sacrebleu:{metadata.version('sacrebleu')}" in bleu
    assert get_metric("bleu").signature != bleu


@pytest.mark.parametrize("name", ["rouge2", "bleu", "levenshtein", "length_ratio"])
def test_metrics_that_need_references_say_so(name):
    m = get_metric(name)
    assert m.needs_references
    with pytest.raises(MetricInputError, match=f"{name}.*needs at least one reference"):
        m.score("some output")
    with pytest.raises(MetricInputError, match="for output 1"):
        m.score_batch(["a b", "c d"], references=[["a b"], []])


def test_metric_that_needs_input_says_so():
    with pytest.raises(MetricInputError, match="needs the input"):
        get_metric("compression_ratio").score("short")


def test_batch_validation_names_the_entry():
    m = get_metric("rouge1")
    with pytest.raises(MetricInputError, match=r"2 outputs but 1 references"):
        m.score_batch(["a", "b"], references=["a"])
    with pytest.raises(MetricInputError, match=r"output\[1\] must be a string"):
        m.score_batch(["a", 3], references=["a", "b"])
    with pytest.raises(MetricInputError, match=r"references\[0\]\[1\] must be a string"):
        m.score_batch(["a"], references=[["a", None]])
    with pytest.raises(MetricInputError, match="one string"):
        m.score_batch("a single string", references=["a"])
    assert m.score_batch([], references=[]) == []


def test_reference_forms_are_equivalent():
    m = get_metric("rouge1")
    assert m.score("the cat", references="the cat") == m.score("the cat", references=["the cat"]) == 1.0
    assert m.score("the cat", references=("the dog",)) == m.score("the cat", "ignored input", ["the dog"])


def test_score_batch_matches_score():
    m = get_metric("chrf_pp")
    outs = ["the cat sat", "a dog ran", "birds fly south"]
    refs = [["the cat sat down"], ["the dog ran", "a dog runs"], "birds migrate south"]
    assert m.score_batch(outs, references=refs) == [m.score(o, references=r) for o, r in zip(outs, refs)]


def test_score_with_feedback_returns_value_and_text():
    r = get_metric("rouge2").score_with_feedback("the cat sat on the mat", references=["the cat sat on a mat"])
    assert isinstance(r, MetricResult) and r.value == pytest.approx(0.6)
    assert "bigram" in r.feedback and "recall" in r.feedback
    r = get_metric("distinct_1").score_with_feedback("the the cat")
    assert "'the'" in r.feedback
    assert get_metric("length").score_with_feedback("a b").feedback is None


def test_register_custom_metric_and_reject_duplicates():
    class Shouting(Metric):
        name = "shouting"

        def __init__(self, threshold: float = 0.5):
            self.threshold = threshold

        def _score(self, output, input, references):
            letters = [c for c in output if c.isalpha()]
            return sum(c.isupper() for c in letters) / max(1, len(letters))

    register_metric("shouting", Shouting)
    try:
        from pytest_nlgeval.metrics import CardError, load_card

        with pytest.raises(CardError, match="no metric card for 'shouting'"):
            load_card("shouting")
        assert "shouting" in list_metrics()
        assert get_metric("shouting").score("HEllo") == pytest.approx(0.4)
        with pytest.raises(ValueError, match="already registered"):
            register_metric("shouting", Shouting)
        with pytest.raises(ValueError, match="already registered"):
            register_metric("rouge2", Shouting)
    finally:
        unregister_metric("shouting")
    assert "shouting" not in list_metrics()


def test_third_party_metric_with_its_own_card(tmp_path):
    from pytest_nlgeval.metrics import load_card

    card = tmp_path / "echo_len.md"
    card.write_text("# Echo length\n\nCharacters of the output.\n\n## Metric Details\n\nRange: 0 to unbounded\n")
    register_metric("echo_len", "pytest_nlgeval.metrics.length:Length", card=str(card), unit="chars")
    try:
        assert get_metric("echo_len").score("abc") == 3.0
        assert load_card("echo_len").summary == "Characters of the output."
    finally:
        unregister_metric("echo_len")
