"""Summary comparison with the matched human continuation (the trajectory paper, section 4.2).

For each signal (coherence, diversity) the components are the differences of the machine trajectory's
mean and variance (divisor T) from those of the human continuation of the same prompt, divided by the
machine continuation's length ``L_m``::

    c = (features(machine) - features(human)) / L_m     # coherence_mean, diversity_mean, coherence_var, diversity_var

Each component is then standardised (z-scored). The paper z-scores across the evaluated collection;
a test scores one new text at a time, so the statistics must come from a fixed reference
(the trajectory paper's public analysis code): :class:`Standardizer` is fitted once (by the reference bank, or on a
machine collection of the user's choice) and stored. Composites are means of standardised components:
``mean`` (the two mean components), ``var`` (the two variance components) and ``all`` (the four).
The components are signed contrasts, so positive and negative differences offset one another.

    >>> import numpy as np
    >>> c = summary_components(np.array([-2.0, 0.9, 0.1, 0.01]), np.array([-3.0, 0.8, 0.1, 0.02]), length=10)
    >>> c.round(4).tolist()
    [0.1, 0.01, 0.0, -0.001]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["summary_components", "Standardizer", "COMPOSITES", "composite"]

#: Composite name -> indices of the components it averages (FEATURE_NAMES order).
COMPOSITES = {"mean": (0, 1), "var": (2, 3), "all": (0, 1, 2, 3)}


def summary_components(machine: np.ndarray, human: np.ndarray, length: int, *, divide: bool = True) -> np.ndarray:
    """Signed differences of summary features, divided by the machine length (``divide=False``: ablation)."""
    if length < 1:
        raise ValueError(f"machine length must be >= 1, got {length}")
    diff = np.asarray(machine, np.float64) - np.asarray(human, np.float64)
    return diff / length if divide else diff


@dataclass(frozen=True)
class Standardizer:
    """Per-component mean and standard deviation (divisor n - 1) fitted on a fixed collection of components.

    >>> s = Standardizer.fit(np.array([[0.0, 1.0], [2.0, 3.0]]))
    >>> s.transform(np.array([1.0, 5.0])).tolist()
    [0.0, 2.1213203435596424]
    """

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, components: np.ndarray) -> "Standardizer":
        x = np.atleast_2d(np.asarray(components, np.float64))
        if x.shape[0] < 2:
            raise ValueError("standardisation needs components of at least two texts")
        scale = x.std(axis=0, ddof=1)
        # A component that never varies in the fitting collection carries no contrast; keep it at 0.
        scale = np.where(scale > 0, scale, np.inf)
        return cls(x.mean(axis=0), scale)

    def transform(self, components: np.ndarray) -> np.ndarray:
        return (np.asarray(components, np.float64) - self.mean) / self.scale


def composite(standardized: np.ndarray, which: str = "mean") -> np.ndarray | float:
    """Mean of the standardised components named by ``which`` (``"mean"``, ``"var"`` or ``"all"``)."""
    if which not in COMPOSITES:
        raise ValueError(f"composite {which!r} is not one of {tuple(COMPOSITES)}")
    z = np.asarray(standardized, np.float64)
    out = z[..., list(COMPOSITES[which])].mean(axis=-1)
    return float(out) if np.ndim(out) == 0 else out
