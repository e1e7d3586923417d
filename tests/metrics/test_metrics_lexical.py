"""ROUGE, BLEU, chrF/chrF++ and TER: hand-computed values, the libraries' documented values, multi-reference rules."""

from __future__ import annotations

import pytest

from pytest_nlgeval.metrics import MetricInputError, get_metric

# rouge-score's README example pair: target first, prediction second
TARGET = "The quick brown fox jumps over the lazy dog"
PRED = "The quick brown dog jumps on the log."

# sacrebleu's README example (two reference streams), documented: BLEU = 48.53, chrF2 = 59.73
SYS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFS = [
    ["The dog bit the man.", "The dog had bit the man."],
    ["It was not unexpected.", "No one was surprised."],
    ["The man bit him first.", "The man had bitten the dog."],
]


def test_rouge1_hand_computed():
    # shared unigrams with clipping: the x2, quick, brown, dog, jumps = 6; |pred| = 8, |target| = 9
    p, r = 6 / 8, 6 / 9
    assert get_metric("rouge1").score(PRED, references=TARGET) == pytest.approx(2 * p * r / (p + r))
    assert get_metric("rouge1", measure="p").score(PRED, references=TARGET) == pytest.approx(p)
    assert get_metric("rouge1", measure="r").score(PRED, references=TARGET) == pytest.approx(r)


def test_rouge2_hand_computed():
    # shared bigrams: "the quick", "quick brown" = 2 of 7 (pred) and 8 (target): F1 = 4/15
    assert get_metric("rouge2").score(PRED, references=TARGET) == pytest.approx(4 / 15)


def test_rougeL_hand_computed():
    # LCS = the quick brown jumps the (5): P = 5/8, R = 5/9, F1 = 50/85
    assert get_metric("rougeL").score(PRED, references=TARGET) == pytest.approx(50 / 85)


def test_rouge_multi_reference_max_and_summeval_mean():
    refs = ["the cat sat", "a dog ran"]
    assert get_metric("rouge1").score("the cat sat", references=refs) == 1.0
    assert get_metric("rouge1", multi_ref="mean").score("the cat sat", references=refs) == pytest.approx(0.5)


def test_rouge_pooled_sums_counts_over_references():
    # ref 1 "the cat sat": 3 hits of 3; ref 2 "a dog ran": 0 of 3 -> P = 3 / (3 + 3), R = 3 / (3 + 3)
    m = get_metric("rouge1", multi_ref="pooled")
    assert m.score("the cat sat", references=["the cat sat", "a dog ran"]) == pytest.approx(0.5)
    # unequal reference lengths: hits 2 + 1, reference unigrams 2 + 4, output unigrams 2 + 2
    r = get_metric("rouge1", multi_ref="pooled", measure="r").score("the cat", references=["the cat", "a cat b c"])
    assert r == pytest.approx(3 / 6)
    assert get_metric("rouge1", multi_ref="pooled", measure="p").score(
        "the cat", references=["the cat", "a cat b c"]
    ) == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="pooled"):
        get_metric("rouge1", multi_ref="pooled", impl="rouge-score")


def test_rouge_max_follows_rouge_score_best_f1_reference():
    # ref 1: P .25 R 1 F .4; ref 2: P 1 R 4/6 F .8 -> rouge-score keeps ref 2 for every measure
    refs = ["a", "a b c d e f"]
    assert get_metric("rouge1", measure="r").score("a b c d", references=refs) == pytest.approx(4 / 6)
    assert get_metric("rouge1", measure="p").score("a b c d", references=refs) == pytest.approx(1.0)


def test_rouge_stemmer_option_changes_matching():
    plain = get_metric("rouge1").score("cats running", references="cat run")
    stemmed = get_metric("rouge1", use_stemmer=True).score("cats running", references="cat run")
    assert plain == 0.0 and stemmed == 1.0


def test_rouge_agrees_with_rouge_score_directly():
    from rouge_score import rouge_scorer

    direct = rouge_scorer.RougeScorer(["rougeL"]).score_multi(["a b c d", "b c e"], "b c d a")["rougeL"].fmeasure
    assert get_metric("rougeL").score("b c d a", references=["a b c d", "b c e"]) == pytest.approx(direct)


def test_bleu_corpus_matches_sacrebleu_documentation():
    assert get_metric("bleu").score_corpus(SYS, references=REFS) == pytest.approx(48.53, abs=0.005)


def test_chrf_corpus_matches_sacrebleu_documentation():
    assert get_metric("chrf").score_corpus(SYS, references=REFS) == pytest.approx(59.73, abs=0.005)


def test_corpus_score_allows_different_reference_counts():
    bleu = get_metric("bleu")
    fewer = [REFS[0], REFS[1], REFS[2][:1]]
    value = bleu.score_corpus(SYS, references=fewer)
    assert 0 < value < bleu.score_corpus(SYS, references=REFS)  # losing a reference can only lose matches here
    with pytest.raises(MetricInputError, match="needs references"):
        bleu.score_corpus(SYS)


def test_sentence_bleu_identity_and_disjoint():
    bleu = get_metric("bleu")
    assert bleu.score("The dog bit the man.", references=["The dog bit the man."]) == pytest.approx(100.0)
    assert bleu.score("alpha beta gamma delta", references=["one two three four"]) == pytest.approx(0.0)


def test_bleu_multi_reference_uses_references_jointly():
    bleu = get_metric("bleu")
    out = "the cat sat on the mat"
    a, b = "the cat sat on a rug", "a cat was on the mat"
    joint = bleu.score(out, references=[a, b])
    assert joint > max(bleu.score(out, references=a), bleu.score(out, references=b))


def test_chrf_pp_differs_from_chrf_and_is_100_on_identity():
    out, ref = "the cats sat", "the cat sat"
    assert get_metric("chrf_pp").score(ref, references=ref) == pytest.approx(100.0)
    assert get_metric("chrf_pp").score(out, references=ref) != get_metric("chrf").score(out, references=ref)


def test_ter_hand_computed_and_direction():
    ter = get_metric("ter")
    assert ter.higher_is_better is False
    assert ter.score("the cat sat", references="the cat sat down") == pytest.approx(25.0)  # 1 insertion / 4 words
    # fewest edits (1, to the second reference) over the average reference length (2 + 4) / 2
    assert ter.score("the cat sat", references=["a dog", "the cat sat down"]) == pytest.approx(100 * 1 / 3)


def test_ter_multi_reference_normalises_by_average_reference_length():
    # 0 edits to the first reference, so TER is 0 whatever the second one's length
    assert get_metric("ter").score("the cat sat", references=["the cat sat", "a b c d e f g"]) == 0.0


def test_bad_sacrebleu_options_fail_at_construction():
    with pytest.raises(ValueError, match="bleu: invalid option"):
        get_metric("bleu", tokenize="no-such-tokenizer")


def _random_texts(
    seed, n, vocab=("the", "cat", "sat", "on", "a", "mat", "dog", "ran", "Cats", "running", "mats", "it's", "2024", "!")
):
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 14))) for _ in range(n)]


@pytest.mark.parametrize("variant", ["rouge1", "rouge2", "rougeL"])
@pytest.mark.parametrize("stem", [False, True])
def test_fast_rouge_equals_rouge_score(variant, stem):
    outs = _random_texts(1, 40)
    refs = [_random_texts(100 + i, 3) for i in range(40)]
    for multi_ref in ("max", "mean"):
        for measure in ("f", "p", "r"):
            kw = dict(use_stemmer=stem, multi_ref=multi_ref, measure=measure)
            fast = get_metric(variant, **kw).score_batch(outs, references=refs)
            slow = get_metric(variant, impl="rouge-score", **kw).score_batch(outs, references=refs)
            assert fast == pytest.approx(slow, abs=1e-12)


@pytest.mark.parametrize("name", ["bleu", "chrf_pp", "ter"])
def test_batches_sharing_references_equal_sentence_scores(name):
    m = get_metric(name)
    outs = ["the cat sat on the mat", "a dog ran", "the cat", "mat on sat cat the", "no overlap here"]
    shared = ["the cat sat on a mat", "a cat was on the mat"]
    refs = [shared, shared, shared, ["the mat"], shared]
    assert m.score_batch(outs, references=refs) == pytest.approx([m.score(o, references=r) for o, r in zip(outs, refs)])
