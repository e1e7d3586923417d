"""Profile densities against scipy.stats: full and diagonal Gaussians, KDE with Scott's bandwidth."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_nlgeval.trajectory.likelihood import Density

stats = pytest.importorskip("scipy.stats")


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    # (coherence mean, diversity mean)-like profiles: different scales, correlated
    base = rng.normal(size=(60, 2))
    x = np.c_[-4.0 + 0.8 * base[:, 0], 0.9 + 0.02 * (base[:, 0] * 0.6 + base[:, 1])]
    q = np.c_[rng.normal(-4.0, 1.0, 7), rng.normal(0.9, 0.03, 7)]
    return x, q


def test_full_gaussian_matches_scipy(data):
    x, q = data
    want = stats.multivariate_normal(x.mean(axis=0), np.cov(x, rowvar=False)).logpdf(q)
    np.testing.assert_allclose(Density.fit(x, "gaussian").logpdf(q), want, rtol=1e-10, atol=1e-10)


def test_diagonal_gaussian_matches_scipy(data):
    x, q = data
    want = stats.norm(x.mean(axis=0), x.std(axis=0, ddof=1)).logpdf(q).sum(axis=1)
    np.testing.assert_allclose(Density.fit(x, "diagonal").logpdf(q), want, rtol=1e-10, atol=1e-10)


def test_kde_scott_matches_scipy(data):
    x, q = data
    want = stats.gaussian_kde(x.T, bw_method="scott").logpdf(q.T)
    np.testing.assert_allclose(Density.fit(x, "kde").logpdf(q), want, rtol=1e-9, atol=1e-9)


def test_typical_profile_is_more_likely_than_atypical(data):
    x, _ = data
    for kind in ("gaussian", "diagonal", "kde"):
        d = Density.fit(x, kind)
        typical, odd = d.logpdf(np.array([[-4.0, 0.9], [-4.0, 0.5]]))
        assert typical > odd + 10


def test_constant_feature_gets_a_ridge_not_a_crash():
    x = np.c_[np.linspace(0, 1, 10), np.zeros(10)]
    value = Density.fit(x, "gaussian").logpdf(np.array([0.5, 0.0]))[0]
    assert np.isfinite(value)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="more than 2 references"):
        Density.fit(np.zeros((2, 2)), "gaussian")
    with pytest.raises(ValueError, match="not one of"):
        Density.fit(np.zeros((5, 2)), "gmm")
    with pytest.raises(ValueError, match="NaN"):
        Density.fit(np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 0.0], [3.0, 1.0]]), "kde")
    with pytest.raises(ValueError, match="features"):
        Density.fit(np.random.default_rng(0).random((5, 2)), "gaussian").logpdf(np.zeros(3))
