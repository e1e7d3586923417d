"""Agreement of trajectory scores with pairwise human preferences, with prompt-cluster bootstrap intervals.

Each pair holds two continuations ``a`` and ``b`` of one prompt and the annotators' votes for the more
human-like one. The majority is the side with more votes; a pair with as many votes for each side has
no majority (a *vote tie*) and is left out of the agreement, but counted. A score *prefers* the side
with the higher value; when both sides score the same (a *score tie*) the pair counts half, the usual
convention of pairwise accuracy with ties. The agreement of a score is::

    (number of pairs where it prefers the majority + 0.5 * score ties) / pairs with a majority

and is also reported on the *unanimous* pairs (at least two votes, all for one side).

Intervals follow the trajectory paper's protocol for ratings (:mod:`.metaeval`): replicates resample
prompts with replacement and keep all pairs of a sampled prompt; a score whose normalisation is fitted
on the evaluated collection is a callable and is refitted in every replicate on the outputs (both
sides) of the replicate's pairs; percentile intervals; paired differences within the same replicates.

Scores are given for the ``2n`` outputs, side ``a`` of the ``n`` pairs first, then side ``b``:

    >>> import numpy as np
    >>> res = pairwise_agreement({"s": np.array([3.0, 2.0, 2.0, 2.0])}, votes_a=[3, 0], votes_b=[0, 2],
    ...                          clusters=[0, 1], n_resamples=10)
    >>> res.point["s"], res.counts.vote_ties, res.counts.unanimous, res.score_ties["s"]
    (0.75, 0, 2, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from pytest_nlgeval.trajectory.metaeval import DEFAULT_RESAMPLES, DEFAULT_SEED, BootstrapResult, cluster_resamples

__all__ = ["pairwise_agreement", "PairwiseResult", "PairCounts", "agreement"]


def agreement(score_a: np.ndarray, score_b: np.ndarray, majority: np.ndarray) -> float:
    """Agreement of a score's preferences with ``majority`` (+1: a, -1: b, 0: no majority); NaN if none has one.

    >>> agreement(np.array([2.0, 1.0, 5.0]), np.array([1.0, 1.0, 0.0]), np.array([1, 1, -1]))
    0.5
    """
    decided = majority != 0
    if not decided.any():
        return float("nan")
    prefer = np.sign(np.asarray(score_a, np.float64) - np.asarray(score_b, np.float64))
    credit = np.where(prefer == 0, 0.5, (prefer == majority).astype(np.float64))
    return float(credit[decided].mean())


@dataclass(frozen=True)
class PairCounts:
    """How many pairs there are, how many have no majority, and how many are unanimous (>= 2 votes, one side)."""

    pairs: int
    vote_ties: int
    unanimous: int
    prompts: int


@dataclass(frozen=True)
class PairwiseResult:
    """Agreement of every score with the majority (``all``) and on the unanimous pairs (``unanimous``).

    ``all`` and ``unanimous`` are :class:`~.metaeval.BootstrapResult` objects: ``.interval(name)`` and
    ``.difference(a, b)`` give percentile intervals. ``score_ties``: pairs (with a majority) where a
    score gives both sides the same value.
    """

    all: BootstrapResult
    unanimous: BootstrapResult
    counts: PairCounts
    score_ties: dict[str, int]

    @property
    def point(self) -> dict[str, float]:
        return self.all.point


def pairwise_agreement(
    scores: Mapping[str, object],
    votes_a: ArrayLike,
    votes_b: ArrayLike,
    clusters: Sequence | np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> PairwiseResult:
    """Agreement of every score with the majority vote, with prompt-cluster bootstrap intervals.

    ``scores``: name -> array of ``2n`` values (side ``a`` of every pair, then side ``b``) or a callable
    ``outputs -> values`` that refits any normalisation on the outputs it is given (indices into those
    ``2n``, with repeats). ``votes_a``/``votes_b``: votes for each side; ``clusters``: each pair's prompt.
    """
    va = np.asarray(votes_a)
    vb = np.asarray(votes_b)
    n = va.size
    if va.shape != (n,) or vb.shape != (n,):
        raise ValueError(f"votes_a and votes_b must be 1-D of one length, got shapes {va.shape} and {vb.shape}")
    if n < 1:
        raise ValueError("pairwise agreement needs at least one pair")
    if np.any(va < 0) or np.any(vb < 0):
        raise ValueError("vote counts must be >= 0")
    groups = np.asarray(clusters)
    if groups.shape != (n,):
        raise ValueError(f"clusters must give one prompt id per pair ({n}), got shape {groups.shape}")
    if not scores:
        raise ValueError("pairwise_agreement needs at least one score")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), not {confidence}")
    fns: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
    for name, spec in scores.items():
        if callable(spec):
            fns[name] = spec
            continue
        arr = np.asarray(spec, np.float64)
        if arr.shape != (2 * n,):
            raise ValueError(
                f"score {name!r} has shape {arr.shape}; expected {2 * n} values (side a of the {n} pairs, then side b)"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"score {name!r} contains NaN or infinite values")
        fns[name] = (lambda a: lambda rows: a[rows])(arr)

    majority = np.sign(va - vb).astype(np.int64)
    unanimous = ((va == 0) | (vb == 0)) & (va + vb >= 2)

    def evaluate(pairs: np.ndarray) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
        outputs = np.concatenate([pairs, pairs + n])
        maj = majority[pairs]
        uni = np.where(unanimous[pairs], maj, 0)
        all_, una, ties = {}, {}, {}
        for name, fn in fns.items():
            values = np.asarray(fn(outputs), np.float64)
            sa, sb = values[: pairs.size], values[pairs.size :]
            all_[name] = agreement(sa, sb, maj)
            una[name] = agreement(sa, sb, uni)
            ties[name] = int(np.sum((sa == sb) & (maj != 0)))
        return all_, una, ties

    point_all, point_uni, score_ties = evaluate(np.arange(n))
    reps_all = {name: np.empty(n_resamples) for name in fns}
    reps_uni = {name: np.empty(n_resamples) for name in fns}
    for r, pairs in enumerate(cluster_resamples(groups, n_resamples, seed)):
        rep_all, rep_uni, _ = evaluate(pairs)
        for name in fns:
            reps_all[name][r] = rep_all[name]
            reps_uni[name][r] = rep_uni[name]
    counts = PairCounts(
        pairs=n,
        vote_ties=int(np.sum(majority == 0)),
        unanimous=int(unanimous.sum()),
        prompts=int(np.unique(groups).size),
    )
    return PairwiseResult(
        BootstrapResult(point_all, reps_all, confidence, seed, n_resamples, statistic="agreement"),
        BootstrapResult(point_uni, reps_uni, confidence, seed, n_resamples, statistic="agreement (unanimous pairs)"),
        counts,
        score_ties,
    )
