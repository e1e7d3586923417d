"""symmetric2 DTW against dtw-python (GPL, test-only oracle) on random and edge-case series."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_nlgeval.trajectory import dtw as D

dtw_oracle = pytest.importorskip("dtw", reason="dtw-python is the test oracle (requirements-dev.txt)")


def oracle(a, b) -> float:
    return dtw_oracle.dtw(
        np.asarray(a, float), np.asarray(b, float), step_pattern="symmetric2", distance_only=True
    ).normalizedDistance


CASES = [
    ([0.3], [0.7]),  # length 1 vs length 1
    ([0.5], list(np.linspace(0, 1, 40))),  # length 1 vs long
    (list(np.linspace(0, 1, 40)), [0.5]),
    ([1.0, 0.9, 0.8, 0.8], [1.0, 0.9, 0.8, 0.8]),  # equal series: distance 0
    ([0.0, 1.0, 2.0], [0.0, 2.0]),
    (list(np.sin(np.arange(3))), list(np.cos(np.arange(200) / 10))),  # very different lengths
]


@pytest.mark.parametrize("a,b", CASES)
@pytest.mark.parametrize("impl", ["default", "numpy"])
def test_edge_cases_match_oracle(a, b, impl):
    got = D.dtw_distance(a, b) if impl == "default" else float(D._numpy_many(np.asarray(a), [np.asarray(b)])[0])
    assert got == pytest.approx(oracle(a, b), abs=1e-12)


def test_equal_series_have_zero_distance_and_origin_weight_is_one():
    assert D.dtw_distance([0.2, 0.4, 0.9], [0.2, 0.4, 0.9]) == 0.0
    # g[0,0] = d[0,0] (weight 1): two single points 1 apart cost 1 / (1 + 1).
    assert D.dtw_distance([0.0], [1.0]) == 0.5


def test_random_series_against_many_references_match_oracle():
    rng = np.random.default_rng(7)
    a = rng.random(60)
    refs = [rng.random(int(n)) for n in rng.integers(1, 90, size=25)]
    want = np.array([oracle(a, r) for r in refs])
    np.testing.assert_allclose(D.dtw_distances(a, refs), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(D._numpy_many(a, refs), want, rtol=0, atol=1e-9)
    assert D.mean_dtw_score(a, refs) == pytest.approx(-want.mean(), abs=1e-12)


def test_backend_is_numba_when_installed():
    pytest.importorskip("numba")
    assert D.backend() == "numba"


@pytest.mark.parametrize("bad,msg", [([], "non-empty"), ([0.1, float("nan")], "NaN"), ([[1.0, 2.0]], "1-D")])
def test_bad_input_is_named(bad, msg):
    with pytest.raises(ValueError, match=msg):
        D.dtw_distance(bad, [0.5])
    with pytest.raises(ValueError, match="reference 0"):
        D.dtw_distances([0.5], [bad])


def test_no_reference_is_an_error():
    with pytest.raises(ValueError, match="at least one reference"):
        D.dtw_distances([0.5], [])


def test_without_numba_the_numpy_sweep_is_used(monkeypatch):
    monkeypatch.setattr(D, "_NUMBA_TRIED", True)
    monkeypatch.setattr(D, "_NUMBA_KERNEL", None)
    assert D.backend() == "numpy"
    rng = np.random.default_rng(11)
    a, refs = rng.random(33), [rng.random(5), rng.random(70), rng.random(1)]
    np.testing.assert_allclose(D.dtw_distances(a, refs), [oracle(a, r) for r in refs], rtol=0, atol=1e-12)
