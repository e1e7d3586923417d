"""Meta-evaluation of trajectory scores: Spearman with human ratings, prompt-cluster bootstrap intervals.

The trajectory paper's protocol (its section 5 and appendix A; its public analysis code):

- Spearman's rank correlation with average ranks for ties;
- 3,000 bootstrap replicates that resample *prompts* with replacement and keep every output of a sampled
  prompt (as many prompts per replicate as there are prompts), seeded (:func:`cluster_resamples`);
- sample-dependent normalisation (the summary z-scoring) is refitted inside every replicate: pass such a
  score as a callable ``rows -> scores`` that fits on the rows it is given (:func:`refit_summary`,
  :func:`refit_qtext`); fixed scores (DTW against a fixed bank, likelihoods, endpoints, everything
  normalised on the bank) are plain arrays;
- percentile 95% intervals; paired differences between two scores are computed within the same replicate.

:func:`score_specs` turns scored records (``nlgeval trajectory score`` lines) into those arrays and
callables for every field, including the refitted variants ``summary_*_refit`` and ``qtext_refit``.

    >>> res = bootstrap_spearman({"dtw": dtw, "end": end}, ratings, prompt_ids)   # doctest: +SKIP
    >>> res.interval("dtw")                                                        # doctest: +SKIP
    Interval(statistic=0.536, low=0.442, high=0.615, ...)
    >>> res.difference("dtw", "end")                                               # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from pytest_nlgeval.trajectory.baselines import QText
from pytest_nlgeval.trajectory.scoring import SCORE_NAMES
from pytest_nlgeval.trajectory.summary import COMPOSITES

__all__ = [
    "rankdata",
    "spearman",
    "bootstrap_spearman",
    "cluster_resamples",
    "refit_summary",
    "refit_qtext",
    "score_specs",
    "missing_fields",
    "BootstrapResult",
    "Interval",
    "DEFAULT_SEED",
    "DEFAULT_RESAMPLES",
    "DEFAULT_FIELDS",
    "REFIT_FIELDS",
]

#: The paper's analysis seed and replicate count.
DEFAULT_SEED = 20260907
DEFAULT_RESAMPLES = 3000

#: Fields whose normalisation is fitted on the evaluated collection and refitted in every replicate:
#: the summary composites z-scored across the collection (the paper's protocol, rather than the bank's
#: fixed standardisation) and Q*Text with min-max ranges of the collection (the paper's appendix B).
REFIT_FIELDS = ("summary_mean_refit", "summary_var_refit", "summary_all_refit", "qtext_refit")

#: Every field a meta-evaluation reports by default: the reference-based comparisons, the fixed
#: baselines, then the reference-free ones (``length``: the number of scored continuation tokens).
DEFAULT_FIELDS = (
    "diversity_dtw",
    "coherence_dtw",
    "diversity_dtw_paired",
    "coherence_dtw_paired",
    "summary_mean",
    "summary_var",
    "summary_all",
    "summary_mean_refit",
    "summary_var_refit",
    "summary_all_refit",
    "likelihood",
    "likelihood_mean",
    "likelihood_var",
    "qtext",
    "qtext_refit",
    "pca_1",
    "pca_2",
    "diversity_end",
    "coherence_end",
    "diversity_mean",
    "coherence_mean",
    "diversity_var",
    "coherence_var",
    "length",
)


def rankdata(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (``scipy.stats.rankdata(method='average')``)."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    # Boundaries of runs of equal values.
    starts = np.r_[0, np.flatnonzero(sorted_x[1:] != sorted_x[:-1]) + 1]
    ends = np.r_[starts[1:], x.size]
    avg = (starts + ends + 1) / 2.0  # mean of the 1-based ranks start+1 .. end
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(avg, ends - starts)
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho (Pearson correlation of average ranks); NaN when either side is constant.

    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]), 3)
    0.8
    """
    xa = np.asarray(x, np.float64)
    ya = np.asarray(y, np.float64)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"spearman needs two 1-D arrays of the same length, got {xa.shape} and {ya.shape}")
    if xa.size < 2:
        return float("nan")
    rx, ry = rankdata(xa), rankdata(ya)
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


def refit_qtext(coherence_end: Sequence[float], diversity_end: Sequence[float]) -> Callable[[np.ndarray], np.ndarray]:
    """A score callable for Q*Text with min-max ranges refitted on the rows it is given.

    This is the trajectory paper's variant (ranges of the evaluated collection, refitted per replicate);
    the ``qtext`` field of a trajectory result uses the bank's fixed ranges instead (:mod:`.baselines`).
    """
    coh = np.asarray(coherence_end, np.float64)
    div = np.asarray(diversity_end, np.float64)
    if coh.shape != div.shape or coh.ndim != 1:
        raise ValueError(f"coherence_end and diversity_end must be 1-D of one length, got {coh.shape} and {div.shape}")

    def score(rows: np.ndarray) -> np.ndarray:
        return np.asarray(QText.fit_endpoints(coh[rows], div[rows]).score_endpoints(coh[rows], div[rows]))

    return score


def score_specs(
    records: Sequence[Mapping[str, Any]], fields: Sequence[str] = DEFAULT_FIELDS, *, source: str = "the scored records"
) -> dict[str, object]:
    """Arrays or refitting callables for ``fields``, from scored records (one per evaluated output).

    A record is what ``nlgeval trajectory score`` writes (:meth:`~.scoring.TrajectoryScores.as_record`):
    the :data:`~.scoring.SCORE_NAMES` values, ``tokens`` and ``summary_components``. ``length`` is the
    number of scored tokens; :data:`REFIT_FIELDS` become callables. Every record must have every field
    (drop the records without a matched human continuation first, see :func:`missing_fields`).
    """
    known = set(SCORE_NAMES) | set(REFIT_FIELDS) | {"length"}
    unknown = [f for f in fields if f not in known]
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; choose from {sorted(known)}")
    specs: dict[str, object] = {}
    for name in fields:
        if name.startswith("summary_") and name.endswith("_refit"):
            comps = np.array([r["summary_components"] for r in records], np.float64)
            specs[name] = refit_summary(comps, name.split("_")[1])
        elif name == "qtext_refit":
            specs[name] = refit_qtext([r["coherence_end"] for r in records], [r["diversity_end"] for r in records])
        elif name == "length":
            specs[name] = np.array([r["tokens"] for r in records], np.float64)
        else:
            specs[name] = np.array([r[name] for r in records], np.float64)
    return specs


def missing_fields(record: Mapping[str, Any], fields: Sequence[str]) -> list[str]:
    """The ``fields`` a scored record cannot provide (no value, e.g. no matched human continuation)."""
    out = []
    for name in fields:
        if name.startswith("summary_") and name.endswith("_refit"):
            key = "summary_components"
        elif name == "qtext_refit":
            key = "coherence_end"
        elif name == "length":
            key = "tokens"
        else:
            key = name
        if record.get(key) is None:
            out.append(name)
    return out


def cluster_resamples(clusters: Sequence | np.ndarray, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Row indices of each prompt-cluster replicate: as many prompts as there are, drawn with replacement.

    Every sampled prompt contributes all of its rows (in input order); a prompt drawn twice contributes
    them twice. The draws are ``numpy.random.default_rng(seed).integers(0, n_prompts, n_prompts)`` per
    replicate, prompts numbered in sorted order of their ids.
    """
    if n_resamples < 1:
        raise ValueError(f"the number of bootstrap replicates must be >= 1, not {n_resamples}")
    _, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    inverse = inverse.ravel()
    members = [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]
    rng = np.random.default_rng(seed)
    for _ in range(n_resamples):
        picked = rng.integers(0, len(members), size=len(members))
        yield np.concatenate([members[g] for g in picked])


@dataclass(frozen=True)
class Interval:
    statistic: float
    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int
    n_undefined: int  # replicates where the correlation was undefined (a constant side)


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimates and the bootstrap replicates of every score, from the same resampled rows.

    ``statistic`` names what was computed (``"spearman"``, or ``"agreement"`` for pairwise preferences).
    """

    point: dict[str, float]
    replicates: dict[str, np.ndarray]
    confidence: float
    seed: int
    n_resamples: int
    statistic: str = "spearman"

    def _interval(self, stat: float, reps: np.ndarray, method: str) -> Interval:
        alpha = (1.0 - self.confidence) / 2.0
        ok = reps[np.isfinite(reps)]
        low, high = np.percentile(ok, [100 * alpha, 100 * (1 - alpha)]) if ok.size else (np.nan, np.nan)
        return Interval(
            float(stat), float(low), float(high), self.confidence, method, self.n_resamples, int(reps.size - ok.size)
        )

    def interval(self, name: str) -> Interval:
        """The statistic of ``name`` with a percentile interval over prompt-cluster replicates."""
        self._check(name)
        return self._interval(
            self.point[name], self.replicates[name], f"{self.statistic}, prompt-cluster percentile bootstrap"
        )

    def difference(self, a: str, b: str) -> Interval:
        """Paired difference ``stat(a) - stat(b)``, with replicate differences from the same resamples."""
        self._check(a)
        self._check(b)
        return self._interval(
            self.point[a] - self.point[b],
            self.replicates[a] - self.replicates[b],
            f"paired {self.statistic} difference, prompt-cluster percentile bootstrap",
        )

    def _check(self, name: str) -> None:
        if name not in self.point:
            raise KeyError(f"no score named {name!r}; scores: {sorted(self.point)}")


def bootstrap_spearman(
    scores: Mapping[str, object],
    ratings: ArrayLike,
    clusters: Sequence | np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> BootstrapResult:
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
            fns[name] = (lambda a: lambda rows: a[rows])(arr)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), not {confidence}")
    everything = np.arange(n)
    point = {name: spearman(fn(everything), y) for name, fn in fns.items()}
    reps = {name: np.empty(n_resamples) for name in fns}
    for r, rows in enumerate(cluster_resamples(groups, n_resamples, seed)):
        for name, fn in fns.items():
            reps[name][r] = spearman(fn(rows), y[rows])
    return BootstrapResult(point, reps, confidence, seed, n_resamples)
