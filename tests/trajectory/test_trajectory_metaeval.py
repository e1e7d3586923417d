"""Spearman with prompt-cluster bootstrap: ties, determinism, a hand-computed case, cluster resampling, refits."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_nlgeval.trajectory.baselines import QText
from pytest_nlgeval.trajectory.metaeval import (
    bootstrap_spearman,
    cluster_resamples,
    missing_fields,
    rankdata,
    refit_qtext,
    refit_summary,
    score_specs,
    spearman,
)
from pytest_nlgeval.trajectory.scoring import SCORE_NAMES

stats = pytest.importorskip("scipy.stats")


def _data(n_prompts=12, per=5, seed=0):
    rng = np.random.default_rng(seed)
    prompts = np.repeat(np.arange(n_prompts), per)
    ratings = rng.integers(1, 6, size=prompts.size).astype(float)  # ties, like Likert ratings
    good = ratings + rng.normal(0, 1.0, prompts.size)
    noise = rng.normal(size=prompts.size)
    return prompts, ratings, good, noise


def test_rankdata_and_spearman_match_scipy_with_ties():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, 40).astype(float)
    y = x + rng.integers(0, 3, 40)
    np.testing.assert_allclose(rankdata(x), stats.rankdata(x))
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_bootstrap_is_deterministic_for_a_seed_and_changes_with_it():
    prompts, ratings, good, noise = _data()
    a = bootstrap_spearman({"good": good, "noise": noise}, ratings, prompts, n_resamples=300, seed=5)
    b = bootstrap_spearman({"good": good, "noise": noise}, ratings, prompts, n_resamples=300, seed=5)
    c = bootstrap_spearman({"good": good, "noise": noise}, ratings, prompts, n_resamples=300, seed=6)
    np.testing.assert_array_equal(a.replicates["good"], b.replicates["good"])
    assert a.interval("good") == b.interval("good")
    assert not np.array_equal(a.replicates["good"], c.replicates["good"])
    iv = a.interval("good")
    assert iv.low <= iv.statistic <= iv.high and iv.n_resamples == 300
    assert iv.statistic == pytest.approx(stats.spearmanr(good, ratings).statistic, abs=1e-12)


def test_paired_difference_uses_the_same_replicates():
    prompts, ratings, good, noise = _data()
    res = bootstrap_spearman({"good": good, "noise": noise}, ratings, prompts, n_resamples=400, seed=1)
    diff = res.difference("good", "noise")
    reps = res.replicates["good"] - res.replicates["noise"]
    assert diff.statistic == pytest.approx(res.point["good"] - res.point["noise"])
    assert diff.low == pytest.approx(np.percentile(reps, 2.5)) and diff.high == pytest.approx(np.percentile(reps, 97.5))
    assert diff.low > 0  # a real signal beats noise within the same resamples
    with pytest.raises(KeyError, match="no score named"):
        res.difference("good", "missing")


def test_resampling_keeps_whole_prompts_and_refits_per_replicate():
    prompts, ratings, good, _ = _data(n_prompts=6, per=4)
    seen = []

    def score(rows):
        seen.append(np.array(rows))
        return good[rows]

    bootstrap_spearman({"s": score}, ratings, prompts, n_resamples=50, seed=0)
    assert len(seen) == 51  # the point estimate plus one call per replicate: refitted every time
    for rows in seen[1:]:
        assert rows.size == prompts.size  # as many prompts as there are, each with all its outputs
        for p in np.unique(prompts[rows]):
            assert np.sum(prompts[rows] == p) % 4 == 0


def test_refit_summary_standardises_on_the_given_rows():
    comps = np.array([[1.0, 10.0, 0.0, 0.0], [3.0, 30.0, 1.0, 1.0], [5.0, 50.0, 2.0, 2.0]])
    fn = refit_summary(comps, "mean")
    np.testing.assert_allclose(fn(np.arange(3)), [-1.0, 0.0, 1.0])
    # on a resample the z-scoring is refitted on that resample, not on all rows
    np.testing.assert_allclose(fn(np.array([0, 0, 1])), [-0.57735027, -0.57735027, 1.15470054], atol=1e-8)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="one prompt id per rating"):
        bootstrap_spearman({"a": [1.0, 2.0]}, [1.0, 2.0], [0])
    with pytest.raises(ValueError, match="score 'a'"):
        bootstrap_spearman({"a": [1.0]}, [1.0, 2.0], [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_spearman({"a": [1.0, np.nan]}, [1.0, 2.0], [0, 1])


def test_bootstrap_against_a_hand_computed_case():
    # Two prompts with two outputs each. Prompt A alone ranks perfectly (rho 1), prompt B alone inversely
    # (rho -1), both together give rho(score=[1,2,3,4], rating=[1,2,4,3]) = 1 - 6*2/(4*15) = 0.8.
    # A replicate draws two prompts: AA -> 1, BB -> -1, AB or BA -> 0.8 (probabilities 1/4, 1/4, 1/2).
    clusters = np.array(["A", "A", "B", "B"])
    score = np.array([1.0, 2.0, 3.0, 4.0])
    rating = np.array([1.0, 2.0, 4.0, 3.0])
    res = bootstrap_spearman({"s": score}, rating, clusters, n_resamples=3000, seed=0)
    assert res.point["s"] == pytest.approx(0.8)
    reps = res.replicates["s"]
    draws = list(cluster_resamples(clusters, 3000, 0))
    for rep, rows in zip(reps, draws):
        picked = "".join(sorted(set(clusters[rows]))) if len(set(clusters[rows])) == 2 else clusters[rows][0] * 2
        assert rep == pytest.approx({"AB": 0.8, "AA": 1.0, "BB": -1.0}[picked])
    freq = {v: np.mean(np.isclose(reps, v)) for v in (1.0, 0.8, -1.0)}
    assert freq[1.0] == pytest.approx(0.25, abs=0.03) and freq[-1.0] == pytest.approx(0.25, abs=0.03)
    assert freq[0.8] == pytest.approx(0.5, abs=0.03)
    iv = res.interval("s")  # 2.5th and 97.5th percentiles of that three-point distribution
    assert (iv.low, iv.high) == (-1.0, 1.0) and iv.n_undefined == 0


def test_cluster_resamples_keep_whole_prompts_in_input_order():
    clusters = np.array(["b", "a", "b", "c", "a"])
    draws = list(cluster_resamples(clusters, 50, 3))
    assert len(draws) == 50 and len({tuple(r) for r in draws}) > 1
    for rows in draws:
        # as many prompt draws as there are prompts (3), each bringing all of its rows
        assert sum(np.sum(clusters[rows] == c) / np.sum(clusters == c) for c in np.unique(clusters[rows])) == 3
        for c in np.unique(clusters[rows]):
            members = np.flatnonzero(clusters == c)
            got = rows[clusters[rows] == c]
            assert got.size % members.size == 0
            np.testing.assert_array_equal(
                got.reshape(-1, members.size), np.tile(members, (got.size // members.size, 1))
            )
    with pytest.raises(ValueError, match="replicates must be >= 1"):
        next(cluster_resamples(clusters, 0, 0))


def test_refit_qtext_refits_the_ranges_on_the_given_rows():
    coh = np.array([-2.0, -3.0, -4.0, -2.5])
    div = np.array([0.9, 0.5, 0.7, 0.6])
    fn = refit_qtext(coh, div)
    everything = fn(np.arange(4))
    np.testing.assert_allclose(everything, QText.fit_endpoints(coh, div).score_endpoints(coh, div))
    rows = np.array([1, 2, 2])
    np.testing.assert_allclose(
        fn(rows), QText.fit_endpoints(coh[rows], div[rows]).score_endpoints(coh[rows], div[rows])
    )
    assert fn(rows)[0] != pytest.approx(everything[1])  # the same text scores differently under other ranges


def test_score_specs_build_arrays_and_refitting_callables():
    rng = np.random.default_rng(0)
    records = []
    for i in range(5):
        rec = {name: float(rng.normal()) for name in SCORE_NAMES}
        rec.update(
            coherence_end=float(-2 - rng.random()),
            diversity_end=float(rng.random()),
            tokens=10 + i,
            summary_components=list(rng.normal(size=4)),
        )
        records.append(rec)
    specs = score_specs(records, ["diversity_dtw", "length", "summary_mean_refit", "qtext_refit"])
    np.testing.assert_array_equal(specs["diversity_dtw"], [r["diversity_dtw"] for r in records])
    np.testing.assert_array_equal(specs["length"], [10, 11, 12, 13, 14])
    comps = np.array([r["summary_components"] for r in records])
    np.testing.assert_allclose(specs["summary_mean_refit"](np.arange(5)), refit_summary(comps, "mean")(np.arange(5)))
    assert callable(specs["qtext_refit"])
    with pytest.raises(ValueError, match="unknown field"):
        score_specs(records, ["diversity_dtwx"])
    assert missing_fields(
        {"summary_mean": None, "summary_components": None, "tokens": 3}, ["summary_mean", "summary_var_refit", "length"]
    ) == ["summary_mean", "summary_var_refit"]


def test_confidence_outside_zero_one_is_named():
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        bootstrap_spearman({"a": [1.0, 2.0, 3.0]}, [1.0, 2.0, 3.0], [0, 1, 2], confidence=95)
