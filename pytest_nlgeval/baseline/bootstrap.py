"""Paired bootstrap of the mean score change between two runs of the same cases.

Method: the cases (checks present in both runs) are resampled with replacement, keeping each case's old
and new score together (paired resampling, Koehn 2004, "Statistical Significance Tests for Machine
Translation Evaluation", EMNLP); the mean change is computed in every replicate, and the 95% interval is
the 2.5th and 97.5th percentiles of the replicate means (the percentile interval, Efron & Tibshirani 1993,
"An Introduction to the Bootstrap", ch. 13). Resampling the per-case differences is the same as resampling
the pairs, because the mean change equals the mean of the differences. Example::

    r = paired_bootstrap([0.8, 0.7, 0.9], [0.6, 0.5, 0.7], seed=0)
    r.statistic, r.low, r.high   # (-0.2, -0.2, -0.2): every case dropped by the same amount
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

__all__ = ["BootstrapResult", "paired_bootstrap"]

_CHUNK = 256  # replicates per vectorised block: bounds memory at 256 x n indices for large suites


@dataclass(frozen=True)
class BootstrapResult:
    """The mean change (new - old), its percentile interval and how it was computed."""

    statistic: float
    low: float
    high: float
    n: int
    replicates: int
    confidence: float
    seed: int
    method: str = "paired bootstrap over cases, percentile interval"

    def to_dict(self) -> dict:
        return asdict(self)


def paired_bootstrap(
    old: Sequence[float], new: Sequence[float], *, replicates: int = 2000, seed: int = 0, confidence: float = 0.95
) -> BootstrapResult:
    """Bootstrap the mean of ``new[i] - old[i]`` over cases ``i``; see the module docstring."""
    import numpy as np  # imported here: the plugin must stay cheap to import

    old_a = np.asarray(old, dtype=np.float64)
    new_a = np.asarray(new, dtype=np.float64)
    if old_a.shape != new_a.shape or old_a.ndim != 1:
        raise ValueError(f"old and new must be 1-d and paired; got shapes {old_a.shape} and {new_a.shape}")
    if old_a.size == 0:
        raise ValueError("a paired bootstrap needs at least one case")
    if not (np.isfinite(old_a).all() and np.isfinite(new_a).all()):
        raise ValueError("scores must be finite")
    if replicates < 1 or not 0 < confidence < 1:
        raise ValueError(f"need replicates >= 1 and 0 < confidence < 1; got {replicates}, {confidence}")
    diff = new_a - old_a
    n = diff.size
    rng = np.random.default_rng(seed)
    means = np.empty(replicates, dtype=np.float64)
    for start in range(0, replicates, _CHUNK):
        stop = min(start + _CHUNK, replicates)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = diff[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return BootstrapResult(
        float(diff.mean()), float(low), float(high), int(n), int(replicates), float(confidence), int(seed)
    )
