"""Perturbations and the sensitivity/stability measures (Ryan et al., 2025, Sec. 3.2)."""

import pytest

from pytest_nlgeval.induction.robustness import (
    SAME,
    WORSE,
    measure_robustness,
    perturb_same,
    perturb_worse,
    sensitivity,
    split_sentences,
    stability,
)

TEXT = "The kettle is big. Fill it with vinegar, then boil it. Rinse it twice and the taste is gone."


def test_degradations_change_the_text_the_way_they_say():
    assert perturb_worse(TEXT, "truncate") == " ".join(TEXT.split()[: len(TEXT.split()) // 2])
    shuffled = perturb_worse(TEXT, "shuffle_sentences", seed=1)
    assert sorted(split_sentences(shuffled)) == sorted(split_sentences(TEXT)) and shuffled != TEXT
    contra = perturb_worse(TEXT, "contradiction", seed=0)
    assert " not " in contra and len(split_sentences(contra)) == 4
    rep = perturb_worse(TEXT, "repetition", seed=0)
    assert len(split_sentences(rep)) == 5
    assert perturb_worse("Single", "shuffle_sentences") == "Single"  # nothing to shuffle: unchanged
    with pytest.raises(ValueError, match="unknown degradation"):
        perturb_worse(TEXT, "delete_everything")


def test_same_quality_edits_keep_the_words():
    def words(t):
        return [w.strip(".,").lower() for w in t.split()]

    for kind in ("whitespace", "casing"):
        assert words(perturb_same(TEXT, kind, seed=2)) == words(TEXT)
    assert perturb_same("Hello , world", "punctuation") == "Hello, world"
    assert perturb_same("The box is big", "synonyms") == "The box is large"
    with pytest.raises(ValueError, match="unknown same-quality edit"):
        perturb_same(TEXT, "translate")


def test_sensitivity_and_stability_formulas():
    assert sensitivity([3, 3, 3, 3], [2, 3, 4, 1]) == 0.5
    assert stability([0.2, 0.8], [0.3, 0.8]) == pytest.approx(1 - 0.05)
    assert sensitivity([float("nan"), 1.0], [0.0, 0.5]) == 1.0  # undefined pairs are skipped


def test_length_metric_is_sensitive_to_truncation_and_stable_under_edits():
    outs = [TEXT, "A short answer. With two sentences.", "One more answer here, with detail. And an end."]
    word_count = lambda o, i, r: [float(len(t.split())) for t in o]  # noqa: E731
    report = measure_robustness(word_count, outs, seed=0)
    assert report.per_perturbation["worse:truncate"]["sensitivity"] == 1.0
    assert report.per_perturbation["worse:shuffle_sentences"]["sensitivity"] == 0.0  # same length
    assert report.per_perturbation["same:casing"]["stability"] == 1.0
    assert set(k.split(":")[1] for k in report.per_perturbation) <= set(WORSE) | set(SAME)
    d = report.to_dict()
    assert d["n_rows"] == 3 and 0 <= d["sensitivity"] <= 1 and 0 <= d["stability"] <= 1
