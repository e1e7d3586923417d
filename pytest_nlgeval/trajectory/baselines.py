"""Two baselines from the trajectory paper, both fitted on the reference bank: fixed Q*Text and a summary PCA.

Neither looks at human ratings, and neither is fitted on the texts being scored: a test scores one text
at a time, so every normalisation comes from the bank's human references and stays fixed.

**Fixed Q*Text** (Garces Arias et al., 2025, as used untuned in the trajectory paper's section 5 and
appendix B; the constants are those of a public re-implementation of Q*Text, so
treat the score as a baseline and not as the original authors' exact number). The endpoint
perplexity, coherence and diversity of a continuation are min-max normalised to ``m_i`` in [0, 1]
(perplexity flipped, so lower perplexity is better), and::

    Q* = 100 * sum_i w_i * m_i * exp(-a_i * (m_i - mu_i) ** 2) / sum_i w_i

with, in the order (perplexity, coherence, diversity), ``w = (0.586, 0.834, 3.853)``,
``mu = (0.458, 0.000, 0.854)`` and ``a = (2.579, 1.496, 7.370)``. Here perplexity is
``exp(-coherence_end)``, the perplexity of the scored continuation tokens under the bank's LM, and
coherence is this project's coherence signal (the mean next-token log-probability), so the two inputs
are monotonically related; the paper's cached values came from other extractors. The min-max ranges
are those of the bank's human references; values outside them are clipped to the range ends. (The
paper refits the ranges on the evaluated collection in every bootstrap replicate; the meta-evaluation
reports that variant as ``qtext_refit``.)

**Summary PCA** (the paper's section 5, "PCA and fixed Q*Text", and appendix B): principal components
of the four standardised summary features (coherence mean and variance, diversity mean and variance),
fitted without ratings on the bank. ``pca_1`` and ``pca_2`` are a continuation's projections on the
first two components. Component signs are arbitrary; here each component's largest loading is made
positive so that the sign is reproducible, which says nothing about which direction is better.

    >>> import numpy as np
    >>> q = QText.fit(perplexity=[10.0, 30.0], coherence=[-3.4, -2.3], diversity=[0.5, 0.9])
    >>> round(q.score(20.0, -2.3, 0.9), 3)      # perplexity mid-range, best coherence and diversity
    71.522
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from pytest_nlgeval.trajectory.signals import FEATURE_NAMES

__all__ = [
    "QText",
    "SummaryPCA",
    "qtext_formula",
    "endpoint_perplexity",
    "QTEXT_INPUTS",
    "QTEXT_WEIGHTS",
    "QTEXT_MU",
    "QTEXT_A",
]

#: Order of the Q*Text inputs and of its constants.
QTEXT_INPUTS = ("perplexity", "coherence", "diversity")
#: The published, untuned initialisation (the trajectory paper's public analysis code).
QTEXT_WEIGHTS = np.array([0.586, 0.834, 3.853])
QTEXT_MU = np.array([0.458, 0.000, 0.854])
QTEXT_A = np.array([2.579, 1.496, 7.370])


def endpoint_perplexity(coherence_end: float | np.ndarray) -> float | np.ndarray:
    """Perplexity of the scored tokens from the endpoint coherence (their mean log-probability)."""
    return (
        np.exp(-np.asarray(coherence_end, np.float64))
        if np.ndim(coherence_end)
        else float(np.exp(-float(coherence_end)))
    )


def qtext_formula(normalised: np.ndarray) -> np.ndarray | float:
    """Q* of min-max normalised ``(perplexity flipped, coherence, diversity)`` values (last axis, length 3).

    >>> round(qtext_formula([0.458, 0.0, 0.854]), 3)    # every input at its mu_i
    67.492
    """
    m = np.asarray(normalised, np.float64)
    if m.shape[-1:] != (3,):
        raise ValueError(
            f"Q*Text needs the three normalised inputs {QTEXT_INPUTS} on the last axis, got shape {m.shape}"
        )
    terms = QTEXT_WEIGHTS * m * np.exp(-QTEXT_A * (m - QTEXT_MU) ** 2)
    out = 100.0 * terms.sum(axis=-1) / QTEXT_WEIGHTS.sum()
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class QText:
    """Fixed Q*Text with its min-max ranges (``low``, ``high``: 3 values in :data:`QTEXT_INPUTS` order)."""

    low: np.ndarray
    high: np.ndarray

    @classmethod
    def fit(cls, perplexity: ArrayLike, coherence: ArrayLike, diversity: ArrayLike) -> "QText":
        """Min-max ranges of the reference texts' endpoint perplexity, coherence and diversity."""
        x = np.column_stack([np.asarray(v, np.float64).ravel() for v in (perplexity, coherence, diversity)])
        if x.shape[0] < 2:
            raise ValueError(f"fitting Q*Text ranges needs at least two reference texts, got {x.shape[0]}")
        if not np.all(np.isfinite(x)):
            bad = [QTEXT_INPUTS[j] for j in range(3) if not np.all(np.isfinite(x[:, j]))]
            raise ValueError(
                f"Q*Text reference {', '.join(bad)} contain NaN or infinite values; "
                "check the LM's log-probabilities of the reference texts"
            )
        return cls(x.min(axis=0), x.max(axis=0))

    @classmethod
    def fit_endpoints(cls, coherence_end: ArrayLike, diversity_end: ArrayLike) -> "QText":
        """:meth:`fit` from endpoint coherence and diversity (perplexity is ``exp(-coherence_end)``)."""
        coh = np.asarray(coherence_end, np.float64)
        return cls.fit(endpoint_perplexity(coh), coh, diversity_end)

    def normalise(self, perplexity, coherence, diversity) -> np.ndarray:
        """``m`` in [0, 1] (last axis: perplexity flipped, coherence, diversity), clipped to the fitted ranges.

        An input that is constant over the references carries no information; it normalises to 0.5.
        """
        x = np.stack(
            np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (perplexity, coherence, diversity))), axis=-1
        )
        span = self.high - self.low
        safe = np.where(span > 0, span, 1.0)
        m = np.where(span > 0, (x - self.low) / safe, 0.5)
        m = np.clip(m, 0.0, 1.0)
        m[..., 0] = 1.0 - m[..., 0]  # lower perplexity is better
        return m

    def score(self, perplexity, coherence, diversity) -> np.ndarray | float:
        """Q* (0 to 100) of one text or of arrays of texts."""
        return qtext_formula(self.normalise(perplexity, coherence, diversity))

    def score_endpoints(self, coherence_end, diversity_end) -> np.ndarray | float:
        """Q* from endpoint coherence and diversity (perplexity is ``exp(-coherence_end)``)."""
        return self.score(endpoint_perplexity(coherence_end), coherence_end, diversity_end)


@dataclass(frozen=True)
class SummaryPCA:
    """Principal components of standardised summary features, fitted on reference texts.

    ``mean``/``scale``: standardisation (divisor n - 1) in :data:`~.signals.FEATURE_NAMES` order;
    ``components``: (4, 4) loadings, one component per row, by decreasing explained variance;
    ``explained``: the fraction of the standardised features' variance each component explains.

        >>> pca = SummaryPCA.fit(np.array([[0, 0, 0, 1.0], [1, 1, 0, 0], [2, 2, 1, 0], [3, 3, 1, 1]]))
        >>> pca.explained.round(3).tolist()
        [0.715, 0.25, 0.035, 0.0]
    """

    mean: np.ndarray
    scale: np.ndarray
    components: np.ndarray
    explained: np.ndarray

    @classmethod
    def fit(cls, features: np.ndarray) -> "SummaryPCA":
        """Fit on an (n, 4) array of summary features (one row per reference text, n >= 2)."""
        x = np.asarray(features, np.float64)
        if x.ndim != 2 or x.shape[1] != len(FEATURE_NAMES):
            raise ValueError(
                f"summary PCA needs an (n, {len(FEATURE_NAMES)}) array of features {FEATURE_NAMES}, got shape {x.shape}"
            )
        if x.shape[0] < 2:
            raise ValueError(f"summary PCA needs at least two reference texts, got {x.shape[0]}")
        if not np.all(np.isfinite(x)):
            raise ValueError("summary features contain NaN or infinite values")
        mean = x.mean(axis=0)
        scale = x.std(axis=0, ddof=1)
        # A feature constant over the references cannot be standardised; it contributes nothing.
        scale = np.where(scale > 0, scale, np.inf)
        z = (x - mean) / scale
        _, sing, vt = np.linalg.svd(z, full_matrices=False)
        # Reproducible orientation: the largest absolute loading of each component is positive.
        big = np.argmax(np.abs(vt), axis=1)
        vt = vt * np.sign(vt[np.arange(vt.shape[0]), big])[:, None]
        var = sing**2
        explained = var / var.sum() if var.sum() > 0 else np.zeros_like(var)
        comps = np.zeros((len(FEATURE_NAMES), len(FEATURE_NAMES)))
        comps[: vt.shape[0]] = vt
        expl = np.zeros(len(FEATURE_NAMES))
        expl[: explained.size] = explained
        return cls(mean, scale, comps, expl)

    def transform(self, features: np.ndarray) -> np.ndarray:
        """Projections on every component: (4,) for one feature vector, (n, 4) for n of them."""
        z = (np.asarray(features, np.float64) - self.mean) / self.scale
        return z @ self.components.T
