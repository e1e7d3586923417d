"""Diversity and coherence trajectories on hand-counted examples; summary features and comparison."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_nlgeval.trajectory.signals import Trajectory, coherence_trajectory, diversity_trajectory, summary_features
from pytest_nlgeval.trajectory.summary import Standardizer, composite, summary_components


def test_diversity_hand_counted():
    # ids: a b a b a
    # t=1: no n-gram -> 1; t=2: bigrams {ab} 1/1 -> 1; t=3: bigrams ab,ba 2/2, trigram aba 1/1 -> 1
    # t=4: bigrams ab,ba,ab -> 2/3; trigrams aba,bab 2/2; 4-gram abab 1/1 -> 2/3
    # t=5: bigrams 2/4; trigrams aba,bab,aba 2/3; 4-grams abab,baba 2/2 -> 1/2 * 2/3 = 1/3
    got = diversity_trajectory([1, 2, 1, 2, 1])
    np.testing.assert_allclose(got, [1, 1, 1, 2 / 3, 1 / 3])


def test_diversity_all_distinct_is_one_and_repetition_drops_it():
    assert diversity_trajectory(list(range(50))).tolist() == [1.0] * 50
    loop = diversity_trajectory([7] * 10)
    # ten identical tokens: bigrams 1/9, trigrams 1/8, 4-grams 1/7
    assert loop[-1] == pytest.approx(1 / 9 * 1 / 8 * 1 / 7)
    assert np.all(np.diff(loop) <= 0)


def test_diversity_horizon_cuts():
    assert diversity_trajectory([1, 2, 3, 1, 2, 3], horizon=4).size == 4


def test_coherence_is_cumulative_mean():
    np.testing.assert_allclose(coherence_trajectory([-2.0, -4.0, 0.0, -2.0]), [-2.0, -3.0, -2.0, -2.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        coherence_trajectory([-1.0, float("-inf")])


def test_summary_features_use_divisor_t():
    c, d = np.array([-1.0, -3.0]), np.array([1.0, 0.5])
    np.testing.assert_allclose(summary_features(c, d), [-2.0, 0.75, 1.0, 0.0625])


def test_trajectory_from_tokens_validates():
    tr = Trajectory.from_tokens([1, 2, 1, 2, 1], [-1.0] * 5, horizon=4)
    assert tr.length == 4 and tr.diversity_end == pytest.approx(2 / 3) and tr.coherence_end == -1.0
    with pytest.raises(ValueError, match="no tokens"):
        Trajectory.from_tokens([], [])
    with pytest.raises(ValueError, match="aligned"):
        Trajectory.from_tokens([1, 2, 3], [-1.0])


def test_summary_comparison_divides_by_machine_length_and_standardises():
    comps = summary_components(np.array([-2.0, 0.8, 0.2, 0.01]), np.array([-3.0, 0.9, 0.1, 0.03]), length=4)
    np.testing.assert_allclose(comps, [0.25, -0.025, 0.025, -0.005])
    raw = summary_components(np.ones(4), np.zeros(4), length=4, divide=False)
    assert raw.tolist() == [1.0] * 4
    std = Standardizer.fit(np.array([[0.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 1.0]]))
    z = std.transform(np.array([1.0 + np.sqrt(2), 1.0, 1.0, 5.0]))
    # a component that never varied in the fitting collection contributes 0, never inf
    np.testing.assert_allclose(z, [1.0, 0.0, 0.0, 0.0])
    assert composite(z, "mean") == pytest.approx(0.5) and composite(z, "all") == pytest.approx(0.25)
    with pytest.raises(ValueError, match="composite"):
        composite(z, "median")
    with pytest.raises(ValueError, match="length"):
        summary_components(np.ones(4), np.ones(4), length=0)
