"""Dynamic time warping with the ``symmetric2`` step pattern, normalised by ``N + M``.

The recurrence (the trajectory paper's public analysis code; Sakoe and Chiba, 1978; the trajectory paper, appendix A.1),
with ``d[i, j] = |a_i - b_j|``, closed endpoints and no window::

    g[0, 0] = d[0, 0]                       # weight 1 at the origin, not 2
    g[i, j] = min(g[i-1, j-1] + 2 d[i, j],  # diagonal step, weight 2
                  g[i-1, j]   +   d[i, j],  # vertical step
                  g[i, j-1]   +   d[i, j])  # horizontal step
    distance = g[N-1, M-1] / (N + M)

This is what dtw-python computes with ``step_pattern="symmetric2"`` and ``distance_only=True``
(``normalizedDistance``); the trajectory paper's code divides by ``(N + M) / 2``, which only rescales.

Two implementations give the same numbers: a compiled loop when :mod:`numba` is installed (the optional
``trajectory`` extra; bit-identical to dtw-python's sums), else a numpy row sweep that computes all references
at once, with each row's horizontal steps as a min-plus prefix scan (equal to rounding, about 1e-15).

    >>> round(dtw_distance([0.0, 1.0, 2.0], [0.0, 2.0]), 6)
    0.2
    >>> dtw_distances([0.0, 1.0], [[0.0, 1.0], [1.0]]).round(6).tolist()
    [0.0, 0.333333]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["dtw_distance", "dtw_distances", "mean_dtw_score", "backend"]

_NUMBA_KERNEL = None
_NUMBA_TRIED = False


def _numba_kernel():
    """The compiled kernel, or None when numba is not installed (compiled once per process)."""
    global _NUMBA_KERNEL, _NUMBA_TRIED
    if _NUMBA_TRIED:
        return _NUMBA_KERNEL
    _NUMBA_TRIED = True
    try:
        import numba
    except Exception:  # not installed, or broken against this numpy: fall back to numpy
        return None

    def kernel(a, flat, offsets, out):
        n = a.shape[0]
        width = 0
        for r in range(offsets.shape[0] - 1):
            width = max(width, offsets[r + 1] - offsets[r])
        prev = np.empty(width)
        cur = np.empty(width)
        for r in range(offsets.shape[0] - 1):
            b = flat[offsets[r] : offsets[r + 1]]
            m = b.shape[0]
            prev[0] = abs(a[0] - b[0])
            for j in range(1, m):
                prev[j] = prev[j - 1] + abs(a[0] - b[j])
            for i in range(1, n):
                ai = a[i]
                d = abs(ai - b[0])
                cur[0] = prev[0] + d
                for j in range(1, m):
                    d = abs(ai - b[j])
                    best = prev[j - 1] + 2.0 * d
                    up = prev[j] + d
                    if up < best:
                        best = up
                    left = cur[j - 1] + d
                    if left < best:
                        best = left
                    cur[j] = best
                prev, cur = cur, prev
            out[r] = prev[m - 1] / (n + m)

    import warnings

    try:
        with warnings.catch_warnings():
            # The on-disk cache saves the compile (seconds) in later processes; where the package folder is
            # read-only numba says so with a warning and compiles in memory, which is fine.
            warnings.simplefilter("ignore")
            _NUMBA_KERNEL = numba.njit(cache=True, nogil=True)(kernel)
    except Exception:
        try:
            _NUMBA_KERNEL = numba.njit(cache=False, nogil=True)(kernel)
        except Exception:
            _NUMBA_KERNEL = None
    return _NUMBA_KERNEL


def backend() -> str:
    """``"numba"`` when the compiled kernel is available, else ``"numpy"``."""
    return "numba" if _numba_kernel() is not None else "numpy"


def _as_series(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; DTW needs finite numbers")
    return arr


def _numpy_many(a: np.ndarray, refs: list[np.ndarray]) -> np.ndarray:
    """Row-by-row sweep, vectorised over the columns and over all references at once.

    Within row ``i`` the horizontal step makes the recurrence a min-plus prefix scan: with
    ``c[j] = min(g[i-1, j-1] + 2 d[i, j], g[i-1, j] + d[i, j])`` and ``S = cumsum(d[i, :])``,
    ``g[i, j] = min_{k <= j}(c[k] + d[i, k+1] + ... + d[i, j]) = S[j] + min_{k <= j}(c[k] - S[k])``,
    one ``np.minimum.accumulate`` per row. Results agree with the sequential loop to rounding (~1e-15).
    """
    n = a.shape[0]
    lengths = np.array([r.shape[0] for r in refs])
    m = int(lengths.max())
    padded = np.zeros((len(refs), m))
    for k, r in enumerate(refs):
        padded[k, : r.shape[0]] = r  # columns past a reference's end never feed its endpoint (scans go left to right)
    prev = np.cumsum(np.abs(a[0] - padded), axis=1)  # row 0: g[0, j] = g[0, j-1] + d[0, j]
    for i in range(1, n):
        d = np.abs(a[i] - padded)
        c = np.empty_like(d)
        c[:, 0] = prev[:, 0] + d[:, 0]
        c[:, 1:] = np.minimum(prev[:, :-1] + 2.0 * d[:, 1:], prev[:, 1:] + d[:, 1:])
        scan = np.cumsum(d, axis=1)
        prev = scan + np.minimum.accumulate(c - scan, axis=1)
    return prev[np.arange(len(refs)), lengths - 1] / (n + lengths)


def dtw_distances(a: ArrayLike, references: Sequence[ArrayLike] | np.ndarray) -> np.ndarray:
    """Normalised symmetric2 DTW distances of ``a`` to each of ``references`` (float64 array).

    >>> dtw_distances([1.0, 1.0], [[1.0], [0.0, 0.0]]).round(6).tolist()
    [0.0, 0.75]
    """
    arr = _as_series(a, "trajectory")
    refs = [_as_series(r, f"reference {k}") for k, r in enumerate(references)]
    if not refs:
        raise ValueError("dtw_distances needs at least one reference trajectory")
    kernel = _numba_kernel()
    if kernel is None:
        return _numpy_many(arr, refs)
    flat = np.concatenate(refs)
    offsets = np.zeros(len(refs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([r.shape[0] for r in refs])
    out = np.empty(len(refs))
    kernel(arr, flat, offsets, out)
    return out


def dtw_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Normalised symmetric2 DTW distance between two series (see the module docstring)."""
    return float(dtw_distances(a, [b])[0])


def mean_dtw_score(a: Sequence[float], references: Sequence[Sequence[float]]) -> float:
    """Negative mean DTW distance of ``a`` to ``references``: higher means closer to the human references.

    The trajectory paper reports temporal scores as negative distances so that, like every other score,
    larger is better.
    """
    return -float(np.mean(dtw_distances(a, references)))
