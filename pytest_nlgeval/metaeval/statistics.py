"""The statistics of meta-evaluation: correlation coefficients at the three levels, and bootstrap
intervals over documents.

Pearson, Spearman and Kendall's tau-b as scipy.stats computes them; ``sample``, ``summary`` and ``system``
levels as the UniEval tables define them; percentile intervals from resampling documents with a seeded
generator (see :mod:`pytest_nlgeval.metaeval` for the protocol they serve).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from pytest_nlgeval.metaeval.records import MetaEvalError

LEVELS = ("sample", "summary", "system")
COEFFICIENTS = ("pearson", "spearman", "kendall")


def _corr3(x, y) -> tuple[float, float, float]:
    """Pearson, Spearman, Kendall tau-b (scipy); NaN when either side is constant or n < 2."""
    import numpy as np
    from scipy import stats

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return (math.nan, math.nan, math.nan)
    return (
        float(stats.pearsonr(x, y)[0]),
        float(stats.spearmanr(x, y)[0]),
        float(stats.kendalltau(x, y)[0]),
    )


def _pearson_np(x, y) -> float:

    xc = x - x.mean()
    yc = y - y.mean()
    denom = math.sqrt(float(xc @ xc) * float(yc @ yc))
    return max(-1.0, min(1.0, float(xc @ yc) / denom)) if denom > 0 else math.nan


def _kendall_b_np(x, y) -> float:
    """Kendall's tau-b by the O(n^2) pair definition (the same statistic scipy computes in O(n log n))."""
    import numpy as np

    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(len(x), 1)
    sx, sy = sx[iu], sy[iu]
    n0 = sx.size
    denom = math.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
    return float((sx * sy).sum()) / denom if denom > 0 and n0 else math.nan


def _fast_corr3(x, y) -> tuple[float, float, float]:
    """The statistics of :func:`_corr3` without scipy's per-call overhead, for bootstrap replicates
    (tests check they equal scipy's, ties included)."""
    import numpy as np
    from scipy.stats import kendalltau, rankdata

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return (math.nan, math.nan, math.nan)
    p = _pearson_np(x, y)
    s = _pearson_np(rankdata(x), rankdata(y))
    k = _kendall_b_np(x, y) if len(x) <= 64 else float(kendalltau(x, y)[0])
    return (p, s, k)


@dataclass
class Correlation:
    """Correlations of one metric with one human dimension at one level.

    ``n`` counts what was correlated (samples, documents used, or systems); ``skipped`` counts
    documents left out at summary level because metric or human scores were constant there.
    ``intervals`` maps each coefficient to its (low, high) bootstrap interval.
    """

    metric: str
    dimension: str
    level: str
    n: int
    skipped: int
    pearson: float
    spearman: float
    kendall: float
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)

    def value(self, coefficient: str) -> float:
        return getattr(self, coefficient)

    def to_dict(self) -> dict:
        def clean(v):
            return None if isinstance(v, float) and math.isnan(v) else v

        return {
            "metric": self.metric,
            "dimension": self.dimension,
            "level": self.level,
            "n": self.n,
            "skipped": self.skipped,
            **{c: clean(getattr(self, c)) for c in COEFFICIENTS},
            "intervals": {c: [clean(lo), clean(hi)] for c, (lo, hi) in self.intervals.items()},
        }


def _groups(keys: Sequence[str]) -> tuple[list[str], "Any"]:
    import numpy as np

    uniq = list(dict.fromkeys(keys))
    pos = {k: i for i, k in enumerate(uniq)}
    return uniq, np.array([pos[k] for k in keys], dtype=int)


def _summary_per_doc(x, y, doc_index, n_docs):
    """Per-document (pearson, spearman, kendall) rows; NaN rows for skipped documents."""
    import numpy as np

    rows = np.full((n_docs, 3), np.nan)
    for d in range(n_docs):
        sel = doc_index == d
        rows[d] = _corr3(x[sel], y[sel])
    return rows


def _system_means(values, sys_index, n_sys, weights=None):
    import numpy as np

    w = np.ones_like(values) if weights is None else weights
    totals = np.bincount(sys_index, weights=values * w, minlength=n_sys)
    counts = np.bincount(sys_index, weights=w, minlength=n_sys)
    with np.errstate(invalid="ignore", divide="ignore"):
        return totals / counts, counts


def correlate(
    metric_values,
    human_values,
    level: str,
    doc_ids: Sequence[str] | None = None,
    system_ids: Sequence[str] | None = None,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    metric: str = "metric",
    dimension: str = "human",
) -> Correlation:
    """Correlate metric values with human values at ``level`` and bootstrap over documents.

    >>> c = correlate([1, 2, 3, 4], [1, 3, 2, 4], "sample", n_bootstrap=0)
    >>> round(c.spearman, 3), round(c.kendall, 3)
    (0.8, 0.667)
    """
    import numpy as np

    if level not in LEVELS:
        raise MetaEvalError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    if not 0 < confidence < 1:
        raise MetaEvalError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(metric_values, dtype=float)
    y = np.asarray(human_values, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise MetaEvalError(f"metric and human values must be 1-D and equally long, got {x.shape} and {y.shape}")
    n = len(x)
    if level == "summary" and doc_ids is None:
        raise MetaEvalError("summary-level correlation needs a doc_id for every record")
    if level == "system" and system_ids is None:
        raise MetaEvalError("system-level correlation needs a system_id for every record")
    docs = list(doc_ids) if doc_ids is not None else [str(i) for i in range(n)]  # sample level: each its own cluster
    doc_names, doc_index = _groups(docs)
    n_docs = len(doc_names)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_docs, size=(n_bootstrap, n_docs)) if n_bootstrap > 0 else None
    alpha = (1 - confidence) / 2

    def interval(samples) -> dict[str, tuple[float, float]]:
        out = {}
        for k, c in enumerate(COEFFICIENTS):
            col = samples[:, k]
            col = col[np.isfinite(col)]
            out[c] = (
                (float(np.quantile(col, alpha)), float(np.quantile(col, 1 - alpha)))
                if col.size
                else (math.nan, math.nan)
            )
        return out

    if level == "summary":
        rows = _summary_per_doc(x, y, doc_index, n_docs)
        used = np.isfinite(rows[:, 0])
        if not used.any():
            point = (math.nan, math.nan, math.nan)
        else:
            a, b, c = (float(v) for v in rows[used].mean(axis=0))
            point = (a, b, c)
        result = Correlation(metric, dimension, level, int(used.sum()), int(n_docs - used.sum()), *point)
        if draws is not None:
            # a document's correlation does not depend on the other documents: resample the rows
            boot = np.full((n_bootstrap, 3), np.nan)
            for b in range(n_bootstrap):
                picked = rows[draws[b]]
                picked = picked[np.isfinite(picked[:, 0])]
                if picked.size:
                    boot[b] = picked.mean(axis=0)
            result.intervals = interval(boot)
        return result

    if level == "sample":
        result = Correlation(metric, dimension, level, n, 0, *_corr3(x, y))
        if draws is not None:
            members = [np.flatnonzero(doc_index == d) for d in range(n_docs)]
            boot = np.empty((n_bootstrap, 3))
            for b in range(n_bootstrap):
                idx = np.concatenate([members[d] for d in draws[b]])
                boot[b] = _fast_corr3(x[idx], y[idx])
            result.intervals = interval(boot)
        return result

    # system level
    sys_names, sys_index = _groups(list(system_ids or []))
    n_sys = len(sys_names)
    mx, _ = _system_means(x, sys_index, n_sys)
    my, _ = _system_means(y, sys_index, n_sys)
    result = Correlation(metric, dimension, level, n_sys, 0, *_corr3(mx, my))
    if draws is not None:
        boot = np.empty((n_bootstrap, 3))
        for b in range(n_bootstrap):
            # weight of a record = how often its document was drawn
            w = np.bincount(draws[b], minlength=n_docs)[doc_index].astype(float)
            bx, cnt = _system_means(x, sys_index, n_sys, w)
            by, _ = _system_means(y, sys_index, n_sys, w)
            keep = cnt > 0  # a system with no drawn document has no mean in this replicate
            boot[b] = _fast_corr3(bx[keep], by[keep])
        result.intervals = interval(boot)
    return result
