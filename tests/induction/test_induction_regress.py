"""PLS selection and composition on synthetic data with known weights; Kendall agreement."""

import math

import numpy as np
import pytest

from pytest_nlgeval.induction.regress import RegressionError, fit_pls, kendall_agreement, predict_linear


def synthetic(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8)) * np.array([1, 2, 0.5, 1, 1, 3, 1, 1]) + np.array([0, 5, -2, 0, 1, 0, 0, 9])
    Z = (X - X.mean(0)) / X.std(0)
    y = 3.0 * Z[:, 0] + 2.0 * Z[:, 1] - 1.0 * Z[:, 2] + rng.normal(scale=0.3, size=n) + 10
    return X, y, [f"m{i}" for i in range(8)]


def test_recovers_the_informative_metrics_their_signs_and_order():
    X, y, names = synthetic()
    fit = fit_pls(X, y, names, n_keep=3)
    assert fit.names == ["m0", "m1", "m2"]  # ranked by |weight|: 3 > 2 > 1
    assert [math.copysign(1, c) for c in fit.coefficients] == [1, 1, -1]
    assert abs(fit.coefficients[0]) > abs(fit.coefficients[1]) > abs(fit.coefficients[2])
    assert abs(np.linalg.norm(fit.weights) - 1) < 1e-9  # PLS weights are a unit vector
    first = fit.steps[0]
    assert sorted(first.dropped) == ["m3", "m4", "m5", "m6", "m7"]


def test_one_component_pls_matches_the_closed_form():
    # with one component: w ~ Z^T (y - mean y), t = Z w, beta = t.y / t.t (Ryan et al. 2025, Sec. 3.1)
    X, y, names = synthetic(seed=3)
    fit = fit_pls(X, y, names, n_keep=8)
    cols = [names.index(n) for n in fit.names]
    Z = (X[:, cols] - X[:, cols].mean(0)) / X[:, cols].std(0)
    yc = y - y.mean()
    w = Z.T @ yc
    w /= np.linalg.norm(w)
    t = Z @ w
    beta = (t @ yc) / (t @ t)
    np.testing.assert_allclose(fit.weights, w, atol=1e-8)
    np.testing.assert_allclose(fit.coefficients, w * beta, atol=1e-8)
    np.testing.assert_allclose(fit.predict(X[:, cols]), y.mean() + t * beta, atol=1e-8)


def test_generated_judges_with_negative_coefficients_are_dropped_but_bank_metrics_are_kept():
    rng = np.random.default_rng(1)
    n = 150
    good = rng.normal(size=n)
    y = good + rng.normal(scale=0.5, size=n)
    judge_against = -y + rng.normal(scale=0.8, size=n)  # a generated judge that runs against the labels
    length_against = -y + rng.normal(scale=0.8, size=n)  # a bank metric may legitimately count against it
    X = np.column_stack([good, judge_against, length_against])
    fit = fit_pls(X, y, ["judge_good", "judge_bad", "length"], generated=[True, True, False], n_keep=3)
    assert fit.names == ["judge_good", "length"]
    assert fit.steps[-1].dropped == ["judge_bad"]
    assert fit.coefficients[1] < 0
    with pytest.raises(RegressionError, match="negative coefficient"):
        fit_pls(X[:, [1]], y, ["judge_bad"], generated=[True], n_keep=1)


def test_rows_with_undefined_values_and_constant_columns_are_left_out():
    X, y, names = synthetic(n=60)
    X[:5, 0] = np.nan
    X[:, 4] = 7.0
    fit = fit_pls(X, y, names, n_keep=3)
    assert fit.rows_used == 55 and fit.rows_dropped == 5
    assert fit.constant_dropped == ["m4"]
    with pytest.raises(RegressionError, match="no candidate varies"):
        fit_pls(np.ones((10, 2)), np.arange(10.0), ["a", "b"])
    with pytest.raises(RegressionError, match="shape mismatch"):
        fit_pls(np.ones((10, 2)), np.arange(9.0), ["a", "b"])


def test_predictions_are_identical_alone_and_in_a_batch():
    X, y, names = synthetic()
    fit = fit_pls(X, y, names, n_keep=5)
    cols = [names.index(n) for n in fit.names]
    batch = fit.predict(X[:, cols])
    alone = [fit.predict(X[i : i + 1, cols])[0] for i in range(len(X))]
    assert batch == alone  # bit for bit
    assert math.isnan(predict_linear([[float("nan")]], [0.0], [1.0], [1.0], 0.0)[0])


def test_kendall_agreement_reports_tau_p_and_interval():
    a = kendall_agreement(list(range(30)), list(range(30)), n_boot=200)
    assert a.tau == pytest.approx(1.0) and a.p_value < 1e-6 and a.significant
    rng = np.random.default_rng(0)
    noise = kendall_agreement(rng.normal(size=40), rng.normal(size=40), n_boot=300)
    assert noise.ci_low < noise.tau < noise.ci_high
    assert noise.n == 40 and noise.to_dict()["n_boot"] == 300
    with pytest.raises(RegressionError, match="at least 3"):
        kendall_agreement([1, 2], [1, 2])
