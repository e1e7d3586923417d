"""Edit distance, diversity, length and readability metrics on hand-counted examples."""

from __future__ import annotations

import pytest

from pytest_nlgeval.metrics import MetricInputError, get_metric
from pytest_nlgeval.metrics.readability import count_syllables, text_statistics


def test_levenshtein_kitten_sitting():
    # the classic example: 3 edits, longer string 7 characters
    assert get_metric("levenshtein").score("kitten", references="sitting") == pytest.approx(1 - 3 / 7)
    assert get_metric("levenshtein").score("kitten", references=["sitting", "kitten"]) == 1.0
    assert get_metric("levenshtein").score("Kitten", references="kitten") < 1.0
    assert get_metric("levenshtein", lowercase=True).score("Kitten", references="kitten") == 1.0


def test_word_edit_rate_hand_computed():
    wer = get_metric("word_edit_rate")
    assert wer.higher_is_better is False
    assert wer.score("the cat sat", references="the cat sat down") == pytest.approx(1 / 4)
    assert wer.score("a cat sat down", references="the cat sat down") == pytest.approx(1 / 4)
    assert wer.score("the cat sat", references=["a b c d e", "the cat sat"]) == 0.0
    assert wer.score("one two three", references="x") == pytest.approx(3.0)  # 1 substitution + 2 insertions


def test_jaro_winkler_published_value():
    # Winkler (1990): MARTHA / MARHTA, Jaro 0.944, Jaro-Winkler 0.961
    assert get_metric("jaro_winkler").score("MARTHA", references="MARHTA") == pytest.approx(0.9611, abs=1e-4)


def test_distinct_n_hand_counted():
    text = "the cat and the dog and the bird"
    # unigrams: 8 tokens, distinct {the, cat, and, dog, bird} = 5
    assert get_metric("distinct_1").score(text) == pytest.approx(5 / 8)
    # bigrams (7): the-cat cat-and and-the the-dog dog-and and-the the-bird -> 6 distinct
    assert get_metric("distinct_2").score(text) == pytest.approx(6 / 7)
    assert get_metric("distinct_3").score(text) == pytest.approx(6 / 6)
    assert get_metric("distinct_2").score("single") == 0.0  # fewer tokens than n
    assert get_metric("distinct_1").score("The the THE") == pytest.approx(1 / 3)  # lowercased


def test_distinct_corpus_pools_ngrams():
    d1 = get_metric("distinct_1")
    outs = ["a b", "a b", "c"]
    assert d1.score_batch(outs) == [1.0, 1.0, 1.0]
    assert d1.score_corpus(outs) == pytest.approx(3 / 5)


def test_distinct_rejects_bad_n():
    with pytest.raises(ValueError, match="n >= 1"):
        get_metric("distinct_1", n=0)


def test_self_bleu_identical_and_disjoint_collections():
    sb = get_metric("self_bleu")
    assert sb.higher_is_better is False
    assert sb.score_batch(["the cat sat on the mat"] * 3) == pytest.approx([100.0] * 3)
    assert sb.score_batch(["alpha beta gamma delta", "one two three four"]) == pytest.approx([0.0, 0.0])
    assert sb.score_corpus(["the cat sat on the mat"] * 2) == pytest.approx(100.0)
    # score_batch ignores dataset references: the collection is the reference set
    assert sb.score_batch(["a b c d", "a b c d"], references=["x y z", "x y z"]) == pytest.approx([100.0, 100.0])
    # score() takes the other outputs as references
    assert sb.score("the cat sat on the mat", references=["the cat sat on the mat"]) == pytest.approx(100.0)


def test_self_bleu_errors():
    sb = get_metric("self_bleu")
    with pytest.raises(MetricInputError, match="at least two outputs"):
        sb.score_batch(["only one"])
    with pytest.raises(MetricInputError, match="other outputs"):
        sb.score("no collection")


def test_length_family():
    assert get_metric("length").score("The cat sat, happily.") == 4.0
    assert get_metric("length", unit="chars").score("abc de") == 6.0
    assert get_metric("length_ratio").score(
        "one two three", references=["a b c d", "a b c d e f g h"]
    ) == pytest.approx(0.5)
    assert get_metric("compression_ratio").score("b c", input="a b c d e f") == pytest.approx(3.0)


def test_length_family_undefined_cases_are_errors():
    with pytest.raises(MetricInputError, match="no words"):
        get_metric("compression_ratio").score("  ...  ", input="a b c")
    with pytest.raises(MetricInputError, match="every reference is empty"):
        get_metric("length_ratio").score("a b", references=["", "!"])
    with pytest.raises(ValueError, match="unit"):
        get_metric("length", unit="tokens")


def test_syllable_heuristic():
    counts = {
        "cat": 1,
        "table": 2,
        "made": 1,
        "reading": 2,
        "see": 1,
        "lazy": 2,
        "over": 2,
        "whale": 1,
        "beautiful": 3,
        "2024": 1,
    }
    assert {w: count_syllables(w) for w in counts} == counts


def test_fkgl_hand_computed():
    # 9 words, 1 sentence, 11 syllables (o-ver, la-zy)
    text = "The quick brown fox jumps over the lazy dog."
    assert text_statistics(text) == (1, 9, 11)
    expected = 0.39 * 9 + 11.8 * 11 / 9 - 15.59
    assert get_metric("fkgl").score(text) == pytest.approx(expected)
    assert get_metric("fkgl").higher_is_better is False


def test_fkgl_two_sentences_and_reading_ease():
    text = "The cat sat. The dog ran away!"
    # 7 words, 2 sentences, 8 syllables (a-way)
    assert text_statistics(text) == (2, 7, 8)
    assert get_metric("fkgl").score(text) == pytest.approx(0.39 * 3.5 + 11.8 * 8 / 7 - 15.59)
    assert get_metric("flesch_reading_ease").score(text) == pytest.approx(206.835 - 1.015 * 3.5 - 84.6 * 8 / 7)


def test_readability_of_empty_text_is_an_error():
    with pytest.raises(MetricInputError, match="no words"):
        get_metric("fkgl").score("?!")
    fb = get_metric("fkgl").score_with_feedback("The cat sat.")
    assert "3 words in 1 sentence" in fb.feedback
