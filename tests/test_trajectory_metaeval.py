"""Spearman with prompt-cluster bootstrap: ties, determinism, cluster resampling, refit per replicate."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_nlgeval.trajectory.metaeval import bootstrap_spearman, rankdata, refit_summary, spearman

stats = pytest.importorskip("scipy.stats")


def _data(n_prompts=12, per=5, seed=0):
    rng = np.random.default_rng(seed)
    prompts = np.repeat(np.arange(n_prompts), per)
    ratings = rng.integers(1, 6, size=prompts.size).astype(float)   # ties, like Likert ratings
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
