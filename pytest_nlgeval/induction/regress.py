"""Compose candidate metrics into one predictor of the human label (AutoMetrics "Regress" step).

Ryan et al. (2025), Section 3.1: z-score every candidate, fit partial least squares with one latent
component on all candidates, rank them by the magnitude of their PLS weight, keep the top ``n``, refit,
then drop LLM-generated judges whose coefficient is negative (they were written to correlate positively;
a bank metric such as length may legitimately count against the label) and refit.

With one component, PLS finds the unit vector ``w = argmax cov(Xw, y)^2`` (``w`` is proportional to
``X^T y`` on centred data), the latent score ``t = Xw`` and ``y_hat = t * beta`` with
``beta = t^T y / t^T t``; scikit-learn's :class:`~sklearn.cross_decomposition.PLSRegression` computes the
same. The fitted model is stored as plain numbers (scaler mean and scale, coefficients, intercept) so a
prediction needs neither scikit-learn nor its version.

Example::

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = 2 * X[:, 0] - X[:, 2] + rng.normal(scale=0.1, size=60)
    >>> fit = fit_pls(X, y, ["a", "b", "c"], n_keep=2)
    >>> fit.names
    ['a', 'c']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from pytest_nlgeval.errors import NLGEvalError

__all__ = [
    "RegressionError",
    "RegressionStep",
    "LinearFit",
    "fit_pls",
    "predict_linear",
    "Agreement",
    "kendall_agreement",
]


class RegressionError(NLGEvalError, ValueError):
    """The candidates cannot be composed (too few rows, nothing varies, nothing left after filtering)."""


@dataclass
class RegressionStep:
    """One fit of the procedure, kept for the report: which candidates went in, their weights and fate."""

    description: str
    names: list[str]
    weights: list[float]
    coefficients: list[float]
    dropped: list[str] = field(default_factory=list)


@dataclass
class LinearFit:
    """The final model: ``y = sum_j coef_j * (x_j - mean_j) / scale_j + intercept``.

    ``weights`` are the PLS weights (unit vector of the latent direction) of the final fit; ``coefficients``
    apply to z-scored values. ``steps`` records the whole selection. ``rows_used`` is the number of training
    rows with every candidate defined (rows where a judge output could not be parsed are left out).
    """

    names: list[str]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    coefficients: list[float]
    intercept: float
    steps: list[RegressionStep]
    rows_used: int
    rows_dropped: int
    constant_dropped: list[str] = field(default_factory=list)

    def predict(self, X) -> list[float]:
        """Predictions for raw candidate values ``X`` (rows x ``len(names)``, same column order)."""
        return predict_linear(X, self.mean, self.scale, self.coefficients, self.intercept)


def predict_linear(
    X, mean: Sequence[float], scale: Sequence[float], coefficients: Sequence[float], intercept: float
) -> list[float]:
    """The composed prediction, computed row by row with a correctly rounded sum.

    Using :func:`math.fsum` per row (instead of a BLAS matrix product whose rounding can depend on the
    batch shape) makes a prediction identical bit for bit whether a row is scored alone or in a batch, at
    fit time or after the artifact was reloaded. A row with an undefined value gives ``nan``.
    """
    out: list[float] = []
    for row in X:
        row = [float(v) for v in row]
        if len(row) != len(coefficients):
            raise ValueError(f"expected {len(coefficients)} component values per row, got {len(row)}")
        if any(not math.isfinite(v) for v in row):
            out.append(float("nan"))
            continue
        terms = [c * ((v - m) / s) for v, m, s, c in zip(row, mean, scale, coefficients)]
        out.append(math.fsum(terms + [intercept]))
    return out


def _pls1(Z, y):
    """One-component PLS on z-scored ``Z``; returns (weights, coefficients, intercept) as float lists."""
    import numpy as np

    from pytest_nlgeval.util.extras import require

    PLSRegression = require("sklearn.cross_decomposition", "inducing a metric (PLS regression)").PLSRegression

    pls = PLSRegression(n_components=1, scale=False)
    pls.fit(Z, y)
    weights = np.asarray(pls.x_weights_)[:, 0]
    coef = np.asarray(pls.coef_).reshape(-1)  # (n_targets, n_features) in scikit-learn >= 1.3
    # scikit-learn predicts (Z - x_mean) @ coef + intercept; fold its (near-zero) x_mean into the intercept.
    intercept = float(np.ravel(pls.intercept_)[0]) - float(np.asarray(pls._x_mean) @ coef)
    # The sign of a PLS direction is arbitrary; orient it so the latent score rises with y.
    if float(weights @ (Z.T @ (y - y.mean()))) < 0:
        weights = -weights
    return [float(w) for w in weights], [float(c) for c in coef], intercept


def fit_pls(
    X,
    y,
    names: Sequence[str],
    *,
    generated: Sequence[bool] | None = None,
    n_keep: int = 5,
    drop_negative_generated: bool = True,
) -> LinearFit:
    """Select and compose candidates by the AutoMetrics two-stage PLS procedure.

    ``X`` holds the candidate values, rows x candidates (``nan`` where a value is undefined), ``y`` the human
    labels of the rows and ``names`` one name per candidate column. ``generated`` says per column whether it
    is an LLM-generated judge (only those are dropped for a negative coefficient). ``n_keep`` is how many
    candidates the second stage keeps (by |PLS weight| of the first stage). ``drop_negative_generated``
    applies the final filtering step.

    :class:`RegressionError` is raised when the shapes disagree, ``n_keep`` is below 1, fewer than 5 rows
    have every candidate defined, the labels or all candidates are constant, or the filtering leaves nothing.
    """
    import numpy as np

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).reshape(-1)
    names = list(names)
    generated = list(generated) if generated is not None else [False] * len(names)
    if X.ndim != 2 or X.shape[1] != len(names) or X.shape[0] != y.shape[0]:
        raise RegressionError(
            f"shape mismatch: X is {X.shape}, {len(names)} names, {y.shape[0]} labels; "
            "pass one column per named candidate and one label per row"
        )
    if n_keep < 1:
        raise RegressionError(f"n_keep must be at least 1, got {n_keep}")
    finite = np.all(np.isfinite(X), axis=1) & np.isfinite(y)
    X, y = X[finite], y[finite]
    rows_dropped = int((~finite).sum())
    if X.shape[0] < 5:
        raise RegressionError(
            f"only {X.shape[0]} rows have every candidate defined ({rows_dropped} left out for undefined "
            "values); at least 5 are needed"
        )
    if float(np.std(y)) == 0.0:
        raise RegressionError("every training label is the same; nothing to fit")
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    varying = scale > 1e-12 * np.maximum(1.0, np.abs(mean))
    constant = [n for n, v in zip(names, varying) if not v]
    if not varying.any():
        raise RegressionError(f"no candidate varies over the training rows ({', '.join(names)})")
    idx = [i for i in range(len(names)) if varying[i]]

    def fit(cols: list[int]):
        Z = (X[:, cols] - mean[cols]) / scale[cols]
        return _pls1(Z, y)

    steps: list[RegressionStep] = []
    w, c, b = fit(idx)
    order = sorted(range(len(idx)), key=lambda k: -abs(w[k]))
    keep = sorted(order[:n_keep], key=lambda k: order.index(k))
    kept = [idx[k] for k in keep]
    steps.append(
        RegressionStep(
            "PLS (1 component) on all candidates; ranked by |weight|",
            [names[i] for i in idx],
            w,
            c,
            dropped=[names[idx[k]] for k in order[n_keep:]],
        )
    )
    w, c, b = fit(kept)
    steps.append(RegressionStep(f"refit on the top {len(kept)}", [names[i] for i in kept], w, c))
    if drop_negative_generated:
        negative = [i for i, coef in zip(kept, c) if generated[i] and coef < 0]
        if negative:
            kept = [i for i in kept if i not in negative]
            if not kept:
                raise RegressionError(
                    "every remaining candidate is a generated judge with a negative coefficient; the judges do "
                    "not track the labels (check the task description and the target column)"
                )
            w, c, b = fit(kept)
            steps.append(
                RegressionStep(
                    "dropped generated judges with negative coefficients; refit",
                    [names[i] for i in kept],
                    w,
                    c,
                    dropped=[names[i] for i in negative],
                )
            )
    return LinearFit(
        names=[names[i] for i in kept],
        mean=[float(mean[i]) for i in kept],
        scale=[float(scale[i]) for i in kept],
        weights=w,
        coefficients=c,
        intercept=b,
        steps=steps,
        rows_used=int(X.shape[0]),
        rows_dropped=rows_dropped,
        constant_dropped=constant,
    )


# -- agreement with the labels ------------------------------------------------------------------------------


@dataclass
class Agreement:
    """Kendall's tau-b between predictions and labels, with a percentile bootstrap interval.

    Attributes: ``tau``, ``p_value`` (scipy's test of tau = 0), ``ci_low``/``ci_high`` (``confidence``
    interval over ``n_boot`` resamples of the rows), ``n`` rows used, ``method``.
    """

    tau: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float = 0.95
    n_boot: int = 1000
    method: str = "Kendall tau-b (scipy.stats.kendalltau); percentile bootstrap over rows"

    @property
    def significant(self) -> bool:
        return math.isfinite(self.p_value) and self.p_value <= 0.05

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in self.__dict__.items()}


def kendall_agreement(y_true, y_pred, *, n_boot: int = 1000, confidence: float = 0.95, seed: int = 0) -> Agreement:
    """Kendall's tau of ``y_pred`` against ``y_true`` with a bootstrap interval (rows with ``nan`` skipped).

    >>> a = kendall_agreement([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 6, 5], n_boot=200)
    >>> round(a.tau, 3)
    0.867
    """
    import numpy as np

    from pytest_nlgeval.util.extras import require

    kendalltau = require("scipy.stats", "inducing a metric (Kendall tau)").kendalltau

    t = np.asarray(y_true, dtype=float)
    p = np.asarray(y_pred, dtype=float)
    ok = np.isfinite(t) & np.isfinite(p)
    t, p = t[ok], p[ok]
    n = int(t.shape[0])
    if n < 3:
        raise RegressionError(f"Kendall's tau needs at least 3 rows with a prediction, got {n}")
    res = kendalltau(t, p)
    tau, pval = float(res.statistic), float(res.pvalue)
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        i = rng.integers(0, n, size=n)
        r = kendalltau(t[i], p[i]).statistic
        if np.isfinite(r):  # a resample with constant labels has no tau
            reps.append(float(r))
    alpha = (1.0 - confidence) / 2.0
    lo, hi = (float(np.quantile(reps, alpha)), float(np.quantile(reps, 1 - alpha))) if reps else (math.nan,) * 2
    return Agreement(tau=tau, p_value=pval, ci_low=lo, ci_high=hi, n=n, confidence=confidence, n_boot=n_boot)
