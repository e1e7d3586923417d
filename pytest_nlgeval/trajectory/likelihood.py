"""Densities of human (mean, variance) profiles: full Gaussian, diagonal Gaussian, Gaussian KDE.

The trajectory paper scores how typical a continuation's profile is among human references: one
bivariate density on ``(coherence mean, diversity mean)`` and one on ``(coherence variance, diversity
variance)`` (its section 4.3; its public analysis code). The alternatives it compares, all implemented here
in numpy so that scoring needs no scipy:

- ``"gaussian"``: full-covariance Gaussian, sample mean and ``np.cov`` (divisor n - 1);
- ``"diagonal"``: the same with the off-diagonal covariances set to zero;
- ``"kde"``: Gaussian kernel density with Scott's bandwidth: kernel covariance
  ``cov(data) * n ** (-2 / (d + 4))``, the rule of ``scipy.stats.gaussian_kde``.

A covariance that is not positive definite (e.g. every reference has the same value) gets a ridge of
``1e-9 * mean variance`` (or ``1e-12``) on its diagonal, so a constant feature does not crash scoring.

    >>> import numpy as np
    >>> d = Density.fit(np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 2.0], [0.5, 1.5]]), "gaussian")
    >>> round(float(d.logpdf(np.array([1.0, 1.0]))[0]), 4)
    -1.2027
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Density", "KINDS"]

KINDS = ("gaussian", "diagonal", "kde")


def _cholesky(cov: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        ridge = max(1e-12, 1e-9 * float(np.mean(np.diag(cov))))
        return np.linalg.cholesky(cov + ridge * np.eye(cov.shape[0]))


@dataclass(frozen=True)
class Density:
    """A fitted density over ``d``-dimensional profiles. ``points`` is only kept for ``"kde"``."""

    kind: str
    mean: np.ndarray  # (d,)
    cov: np.ndarray  # (d, d): the Gaussian's covariance, or the KDE kernel covariance
    points: np.ndarray  # (n, d) for "kde", (0, d) otherwise

    @classmethod
    def fit(cls, data: np.ndarray, kind: str = "gaussian") -> "Density":
        """Fit ``kind`` on ``data`` (n x d, one row per human reference; needs n > d)."""
        if kind not in KINDS:
            raise ValueError(f"density kind {kind!r} is not one of {KINDS}")
        x = np.asarray(data, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"profiles must be a 2-D array (references x features), got shape {x.shape}")
        n, d = x.shape
        if n <= d:
            raise ValueError(
                f"fitting a {d}-dimensional density needs more than {d} references, got {n}; "
                "add human continuations to the bank"
            )
        if not np.all(np.isfinite(x)):
            raise ValueError("profiles contain NaN or infinite values")
        mean = x.mean(axis=0)
        cov = np.atleast_2d(np.cov(x, rowvar=False))
        if kind == "diagonal":
            cov = np.diag(np.diag(cov))
        if kind == "kde":
            factor = n ** (-1.0 / (d + 4))  # Scott's rule
            return cls(kind, mean, cov * factor**2, x.copy())
        return cls(kind, mean, cov, np.zeros((0, d)))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density at each row of ``x`` (a single profile may be given as a 1-D array)."""
        pts = np.atleast_2d(np.asarray(x, dtype=np.float64))
        d = self.mean.shape[0]
        if pts.shape[1] != d:
            raise ValueError(f"profiles have {pts.shape[1]} features; this density has {d}")
        chol = _cholesky(self.cov)
        log_det = 2.0 * np.sum(np.log(np.diag(chol)))
        const = -0.5 * (d * np.log(2.0 * np.pi) + log_det)
        if self.kind != "kde":
            z = np.linalg.solve(chol, (pts - self.mean).T)  # (d, m)
            return const - 0.5 * np.sum(z * z, axis=0)
        diff = pts[:, None, :] - self.points[None, :, :]  # (m, n, d)
        z = np.linalg.solve(chol, diff.reshape(-1, d).T).T.reshape(diff.shape)
        terms = const - 0.5 * np.sum(z * z, axis=2)  # (m, n)
        top = terms.max(axis=1, keepdims=True)
        return (top[:, 0] + np.log(np.exp(terms - top).sum(axis=1))) - np.log(self.points.shape[0])

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}mean": self.mean, f"{prefix}cov": self.cov, f"{prefix}points": self.points}

    @classmethod
    def from_arrays(cls, kind: str, arrays, prefix: str) -> "Density":
        return cls(
            kind,
            np.asarray(arrays[f"{prefix}mean"], np.float64),
            np.asarray(arrays[f"{prefix}cov"], np.float64),
            np.asarray(arrays[f"{prefix}points"], np.float64),
        )
