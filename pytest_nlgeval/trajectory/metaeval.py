"""Meta-evaluation of trajectory scores: Spearman with human ratings, prompt-cluster bootstrap intervals.

The trajectory paper's protocol (its section 5 and appendix A; REFERENCE.md section 3):

- Spearman's rank correlation with average ranks for ties;
- 3,000 bootstrap replicates that resample *prompts* with replacement and keep every output of a sampled
  prompt (as many prompts per replicate as there are prompts), seeded;
- sample-dependent normalisation (the summary z-scoring) is refitted inside every replicate: pass such a
  score as a callable ``rows -> scores`` that fits on the rows it is given (:func:`refit_summary`);
  fixed scores (DTW against a fixed bank, likelihoods, endpoints) are plain arrays;
- percentile 95% intervals; paired differences between two scores are computed within the same replicate.

    >>> res = bootstrap_spearman({"dtw": dtw, "end": end}, ratings, prompt_ids)   # doctest: +SKIP
    >>> res.interval("dtw")                                                        # doctest: +SKIP
    Interval(statistic=0.536, low=0.442, high=0.615, ...)
    >>> res.difference("dtw", "end")                                               # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from pytest_nlgeval.trajectory.summary import COMPOSITES

__all__ = ["rankdata", "spearman", "bootstrap_spearman", "refit_summary", "BootstrapResult", "Interval",
           "DEFAULT_SEED", "DEFAULT_RESAMPLES"]

#: The paper's analysis seed and replicate count.
DEFAULT_SEED = 20260907
DEFAULT_RESAMPLES = 3000



def rankdata(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (``scipy.stats.rankdata(method='average')``)."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    # Boundaries of runs of equal values.
    starts = np.r_[0, np.flatnonzero(sorted_x[1:] != sorted_x[:-1]) + 1]
    ends = np.r_[starts[1:], x.size]
    avg = (starts + ends + 1) / 2.0            # mean of the 1-based ranks start+1 .. end
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(avg, ends - starts)
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (Pearson correlation of average ranks); NaN when either side is constant.

        >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]), 3)
        0.8
    """
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"spearman needs two 1-D arrays of the same length, got {x.shape} and {y.shape}")
    if x.size < 2:
        return float("nan")
    rx, ry = rankdata(x), rankdata(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def refit_summary(components: np.ndarray, which: str = "mean") -> Callable[[np.ndarray], np.ndarray]:
    """A score callable for summary composites that refits the z-scoring on the rows it is given.

    ``components``: (n, 4) raw summary components (:func:`~.summary.summary_components`) of the n outputs.
    """
    comps = np.asarray(components, np.float64)
    if comps.ndim != 2 or comps.shape[1] != 4:
        raise ValueError(f"components must be an (n, 4) array, got shape {comps.shape}")
    cols = list(COMPOSITES[which])

    def score(rows: np.ndarray) -> np.ndarray:
        x = comps[rows][:, cols]
        scale = x.std(axis=0, ddof=1)
        scale = np.where(scale > 0, scale, np.inf)
        return ((x - x.mean(axis=0)) / scale).mean(axis=1)

    return score


@dataclass(frozen=True)
class Interval:
    statistic: float
    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int
    n_undefined: int   # replicates where the correlation was undefined (a constant side)


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimates and the bootstrap replicates of every score, from the same resampled rows."""

    point: dict[str, float]
    replicates: dict[str, np.ndarray]
    confidence: float
    seed: int
    n_resamples: int

    def _interval(self, stat: float, reps: np.ndarray, method: str) -> Interval:
        alpha = (1.0 - self.confidence) / 2.0
        ok = reps[np.isfinite(reps)]
        low, high = (np.percentile(ok, [100 * alpha, 100 * (1 - alpha)]) if ok.size else (np.nan, np.nan))
        return Interval(float(stat), float(low), float(high), self.confidence, method, self.n_resamples,
                        int(reps.size - ok.size))

    def interval(self, name: str) -> Interval:
        """Spearman of ``name`` with a percentile interval over prompt-cluster replicates."""
        self._check(name)
        return self._interval(self.point[name], self.replicates[name], "spearman, prompt-cluster percentile bootstrap")

    def difference(self, a: str, b: str) -> Interval:
        """Paired difference ``rho(a) - rho(b)``, with replicate differences from the same resamples."""
        self._check(a)
        self._check(b)
        return self._interval(self.point[a] - self.point[b], self.replicates[a] - self.replicates[b],
                              "paired spearman difference, prompt-cluster percentile bootstrap")

    def _check(self, name: str) -> None:
        if name not in self.point:
            raise KeyError(f"no score named {name!r}; scores: {sorted(self.point)}")


def bootstrap_spearman(scores: Mapping[str, object], ratings: Sequence[float], clusters: Sequence, *,
                       n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                       confidence: float = 0.95) -> BootstrapResult:
    """Spearman of every score with ``ratings`` and prompt-cluster bootstrap replicates (see module docstring).

    ``scores``: name -> array of n scores, or a callable ``rows -> scores of those rows`` that refits any
    sample-dependent normalisation on ``rows`` (indices with repeats). ``clusters``: the prompt of each row.
    """
    y = np.asarray(ratings, np.float64)
    n = y.size
    groups = np.asarray(clusters)
    if groups.shape != (n,):
        raise ValueError(f"clusters must give one prompt id per rating ({n}), got shape {groups.shape}")
    if not scores:
        raise ValueError("bootstrap_spearman needs at least one score")
    fns: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
    for name, spec in scores.items():
        if callable(spec):
            fns[name] = spec
        else:
            arr = np.asarray(spec, np.float64)
            if arr.shape != (n,):
                raise ValueError(f"score {name!r} has shape {arr.shape}; expected one value per rating ({n})")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"score {name!r} contains NaN or infinite values")
            fns[name] = (lambda a: (lambda rows: a[rows]))(arr)
    _, inverse = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]
    everything = np.arange(n)
    point = {name: spearman(fn(everything), y) for name, fn in fns.items()}
    rng = np.random.default_rng(seed)
    reps = {name: np.empty(n_resamples) for name in fns}
    for r in range(n_resamples):
        picked = rng.integers(0, len(members), size=len(members))
        rows = np.concatenate([members[g] for g in picked])
        for name, fn in fns.items():
            reps[name][r] = spearman(fn(rows), y[rows])
    return BootstrapResult(point, reps, confidence, seed, n_resamples)
