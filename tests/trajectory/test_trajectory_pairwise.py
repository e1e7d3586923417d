"""Pairwise agreement with the majority vote: ties, unanimous pairs, cluster bootstrap, refits per replicate."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_nlgeval.trajectory.pairwise import agreement, pairwise_agreement


def test_agreement_counts_score_ties_as_half_and_skips_vote_ties():
    a = np.array([2.0, 1.0, 5.0, 3.0, 0.0])
    b = np.array([1.0, 1.0, 0.0, 3.0, 9.0])
    majority = np.array([1, 1, -1, 0, 0])  # the last two pairs have no majority
    # pair 0 agrees (1), pair 1 is a score tie (0.5), pair 2 disagrees (0): (1 + 0.5 + 0) / 3
    assert agreement(a, b, majority) == pytest.approx(0.5)
    assert np.isnan(agreement(a, b, np.zeros(5, int)))


def test_pairwise_agreement_hand_computed_with_ties_and_unanimous_votes():
    # pairs: votes (a, b) = (3, 0) unanimous a; (1, 2) majority b; (2, 2) vote tie; (0, 1) single vote for b
    votes_a, votes_b = [3, 1, 2, 0], [0, 2, 2, 1]
    side_a = [0.9, 0.5, 0.1, 0.4]
    side_b = [0.2, 0.5, 0.8, 0.7]  # pair 1 is a score tie
    res = pairwise_agreement(
        {"s": np.array(side_a + side_b), "flip": -np.array(side_a + side_b)},
        votes_a,
        votes_b,
        clusters=["p", "q", "r", "s"],
        n_resamples=200,
        seed=1,
    )
    # s: pair 0 agrees, pair 1 tie (0.5), pair 3 agrees -> 2.5 / 3; flip: 0 + 0.5 + 0 -> 0.5 / 3
    assert res.point["s"] == pytest.approx(2.5 / 3) and res.point["flip"] == pytest.approx(0.5 / 3)
    assert res.counts.pairs == 4 and res.counts.vote_ties == 1 and res.counts.prompts == 4
    assert res.counts.unanimous == 1  # (3, 0); a single vote is not unanimity
    assert res.unanimous.point["s"] == 1.0 and res.unanimous.point["flip"] == 0.0
    assert res.score_ties == {"s": 1, "flip": 1}
    iv = res.all.interval("s")
    assert 0.0 <= iv.low <= iv.statistic <= iv.high <= 1.0 and iv.method.startswith("agreement")
    diff = res.all.difference("s", "flip")
    assert diff.statistic == pytest.approx(2 / 3) and diff.low >= 0


def test_pairwise_bootstrap_resamples_prompts_and_refits_on_both_sides():
    rng = np.random.default_rng(0)
    n = 12
    clusters = np.repeat(np.arange(6), 2)
    quality = rng.normal(size=2 * n)
    votes_a = (quality[:n] > quality[n:]).astype(int) * 3
    votes_b = 3 - votes_a
    seen = []

    def refit(outputs):
        seen.append(np.array(outputs))
        x = quality[outputs]
        return (x - x.mean()) / x.std()  # a normalisation fitted on the replicate's outputs

    res = pairwise_agreement({"q": refit}, votes_a, votes_b, clusters, n_resamples=40, seed=2)
    assert len(seen) == 41 and res.point["q"] == 1.0
    for outputs in seen[1:]:
        pairs, other = outputs[: outputs.size // 2], outputs[outputs.size // 2 :]
        np.testing.assert_array_equal(other, pairs + n)  # side b of the same pairs
        assert pairs.size == n  # 6 prompts of 2 pairs each
        for c in np.unique(clusters[pairs]):
            assert np.sum(clusters[pairs] == c) % 2 == 0
    again = pairwise_agreement({"q": refit}, votes_a, votes_b, clusters, n_resamples=40, seed=2)
    np.testing.assert_array_equal(again.all.replicates["q"], res.all.replicates["q"])


def test_pairwise_bad_inputs_are_named():
    with pytest.raises(ValueError, match="expected 4 values"):
        pairwise_agreement({"s": [1.0, 2.0]}, [1, 0], [0, 1], [0, 1])
    with pytest.raises(ValueError, match="one prompt id per pair"):
        pairwise_agreement({"s": [1.0, 2.0, 3.0, 4.0]}, [1, 0], [0, 1], [0])
    with pytest.raises(ValueError, match="score 's' contains NaN"):
        pairwise_agreement({"s": [1.0, np.nan, 3.0, 4.0]}, [1, 0], [0, 1], [0, 1])
    with pytest.raises(ValueError, match=">= 0"):
        pairwise_agreement({"s": [1.0, 2.0, 3.0, 4.0]}, [1, -1], [0, 1], [0, 1])
