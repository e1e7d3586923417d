"""Coherence and diversity measured on every prefix of a continuation (the trajectory paper, section 3).

For a continuation of token ids ``y_1 .. y_T`` (at most ``horizon`` tokens; both signals include the first
continuation token and use the same positions):

- diversity at prefix ``t``: the product over ``n = 2, 3, 4`` of ``distinct n-grams / total n-grams`` among
  the token ids ``y_1 .. y_t``; a ratio is 1 while the prefix is shorter than ``n``. This is per text and
  on token ids (the trajectory paper's public analysis code), unlike Su et al.'s pooled whitespace-word version;
- coherence at prefix ``t``: the cumulative mean ``(1/t) sum_{s<=t} log p(y_s | BOS, prompt, y_<s)`` of the
  next-token log-probabilities under a causal LM (:mod:`nlgeval_runtime.causal_lm` computes them in one
  forward pass per text).

    >>> diversity_trajectory([5, 6, 5, 6]).round(4).tolist()
    [1.0, 1.0, 1.0, 0.6667]
    >>> coherence_trajectory([-1.0, -3.0, -2.0]).tolist()
    [-1.0, -2.0, -2.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "Trajectory",
    "diversity_trajectory",
    "coherence_trajectory",
    "summary_features",
    "FEATURE_NAMES",
    "DEFAULT_HORIZON",
]

#: Tokens scored by default (the paper's longer controlled horizon).
DEFAULT_HORIZON = 128
#: Order of :func:`summary_features`.
FEATURE_NAMES = ("coherence_mean", "diversity_mean", "coherence_var", "diversity_var")


def diversity_trajectory(token_ids: ArrayLike, horizon: int | None = None) -> np.ndarray:
    """Diversity of every prefix of ``token_ids`` (first ``horizon`` tokens), float64, one value per token."""
    every = np.asarray(token_ids).ravel()
    ids = [int(t) for t in (every if horizon is None else every[:horizon])]
    out = np.empty(len(ids), dtype=np.float64)
    seen: list[set] = [set(), set(), set()]
    for t in range(len(ids)):
        value = 1.0
        for k, n in enumerate((2, 3, 4)):
            total = t + 2 - n  # n-grams among the first t + 1 tokens
            if total <= 0:
                continue  # no n-gram yet: the ratio is 1
            seen[k].add(tuple(ids[t + 1 - n : t + 1]))
            value *= len(seen[k]) / total
        out[t] = value
    return out


def coherence_trajectory(logprobs: ArrayLike, horizon: int | None = None) -> np.ndarray:
    """Cumulative mean of next-token log-probabilities (first ``horizon`` of them), float64."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if horizon is not None:
        lp = lp[:horizon]
    if lp.ndim != 1:
        raise ValueError(f"logprobs must be 1-D, got shape {lp.shape}")
    if lp.size and not np.all(np.isfinite(lp)):
        raise ValueError("logprobs contain NaN or infinite values; the language model output is unusable")
    return np.cumsum(lp) / np.arange(1, lp.size + 1)


def summary_features(coherence: np.ndarray, diversity: np.ndarray) -> np.ndarray:
    """``(coherence mean, diversity mean, coherence variance, diversity variance)``; variances divide by T."""
    return np.array([np.mean(coherence), np.mean(diversity), np.var(coherence), np.var(diversity)])


@dataclass(frozen=True)
class Trajectory:
    """The signals of one continuation: its token ids and log-probs, and both trajectories (same length).

    >>> tr = Trajectory.from_tokens([1, 2, 1, 2], [-2.0, -1.0, -1.0, -0.5])
    >>> tr.length, round(tr.diversity_end, 4), tr.coherence_end
    (4, 0.6667, -1.125)
    """

    token_ids: np.ndarray
    logprobs: np.ndarray
    diversity: np.ndarray
    coherence: np.ndarray

    @classmethod
    def from_tokens(
        cls, token_ids: Sequence[int], logprobs: Sequence[float], horizon: int | None = DEFAULT_HORIZON
    ) -> "Trajectory":
        ids = np.asarray(list(token_ids)[: horizon if horizon is not None else None], dtype=np.int64)
        lp = np.asarray(logprobs, dtype=np.float64)[: ids.size]
        if ids.size == 0:
            raise ValueError("the continuation has no tokens; a trajectory needs at least one token")
        if lp.size != ids.size:
            raise ValueError(f"{ids.size} tokens but {lp.size} log-probabilities; they must be aligned")
        return cls(ids, lp, diversity_trajectory(ids), coherence_trajectory(lp))

    @property
    def length(self) -> int:
        return int(self.token_ids.size)

    @property
    def diversity_end(self) -> float:
        return float(self.diversity[-1])

    @property
    def coherence_end(self) -> float:
        return float(self.coherence[-1])

    def features(self) -> np.ndarray:
        """Summary features in :data:`FEATURE_NAMES` order."""
        return summary_features(self.coherence, self.diversity)
