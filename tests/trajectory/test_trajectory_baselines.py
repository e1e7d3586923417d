"""Fixed Q*Text and the summary PCA: the formula on fixed numbers, normalisation and PCA fitted on the bank only."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_nlgeval.trajectory.bank import ReferenceBank
from pytest_nlgeval.trajectory.baselines import QText, SummaryPCA, qtext_formula
from pytest_nlgeval.trajectory.scoring import SCORE_NAMES, score_trajectory
from pytest_nlgeval.trajectory.signals import Trajectory

LM = {"model_id": "m1", "tokenizer_sha256": "t" * 64, "model_ref": "lm-m1", "fingerprint": {}}


def _trajectories(n, seed, horizon=30, vocab=40, mean_lp=-4.0):
    rng = np.random.default_rng(seed)
    return [
        Trajectory.from_tokens(
            rng.integers(0, vocab, size=int(rng.integers(12, horizon + 1))),
            rng.normal(mean_lp, 1, size=horizon),
            horizon,
        )
        for _ in range(n)
    ]


@pytest.fixture(scope="module")
def bank():
    trs = _trajectories(12, seed=0)
    return ReferenceBank.from_trajectories([f"prompt {i % 6}" for i in range(12)], trs, lm=LM, horizon=30)


def test_qtext_formula_on_fixed_numbers():
    # m = (0.5, 1.0, 1.0), worked out term by term with the published constants
    expected = (
        100
        * (
            0.586 * 0.5 * math.exp(-2.579 * (0.5 - 0.458) ** 2)
            + 0.834 * 1.0 * math.exp(-1.496 * (1.0 - 0.0) ** 2)
            + 3.853 * 1.0 * math.exp(-7.370 * (1.0 - 0.854) ** 2)
        )
        / (0.586 + 0.834 + 3.853)
    )
    assert expected == pytest.approx(71.52200771, abs=1e-8)
    assert qtext_formula([0.5, 1.0, 1.0]) == pytest.approx(expected, abs=1e-12)
    assert qtext_formula([0.0, 0.0, 0.0]) == 0.0
    # diversity carries most weight: its optimum alone gives 100 * 3.853 * 0.854 / 5.273
    assert qtext_formula([0.0, 0.0, 0.854]) == pytest.approx(100 * 3.853 * 0.854 / 5.273, abs=1e-9)
    batch = qtext_formula(np.array([[0.5, 1.0, 1.0], [0.0, 0.0, 0.854]]))
    np.testing.assert_allclose(batch, [expected, 100 * 3.853 * 0.854 / 5.273])
    with pytest.raises(ValueError, match="three normalised inputs"):
        qtext_formula([0.5, 1.0])


def test_qtext_minmax_flips_perplexity_and_clips_to_the_fitted_range():
    q = QText.fit(perplexity=[10.0, 20.0, 30.0], coherence=[-3.4, -2.0, -2.3], diversity=[0.5, 0.7, 0.9])
    np.testing.assert_array_equal(q.low, [10.0, -3.4, 0.5])
    np.testing.assert_array_equal(q.high, [30.0, -2.0, 0.9])
    np.testing.assert_allclose(q.normalise(15.0, -2.7, 0.6), [0.75, 0.5, 0.25])  # perplexity flipped
    np.testing.assert_allclose(q.normalise(5.0, -9.0, 1.0), [1.0, 0.0, 1.0])  # outside the range: clipped
    assert q.score(15.0, -2.7, 0.6) == pytest.approx(qtext_formula([0.75, 0.5, 0.25]))
    flat = QText.fit(perplexity=[10.0, 10.0], coherence=[-3.0, -2.0], diversity=[0.5, 0.9])
    assert flat.normalise(12.0, -3.0, 0.5)[0] == 0.5  # a constant reference input carries nothing
    with pytest.raises(ValueError, match="perplexity contain NaN"):
        QText.fit([1.0, np.nan], [-1.0, -2.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="at least two reference texts"):
        QText.fit([1.0], [-1.0], [0.5])


def test_qtext_field_is_normalised_on_the_bank_only(bank):
    coh = np.array([c[-1] for c in bank.coherence])
    div = np.array([d[-1] for d in bank.diversity])
    np.testing.assert_allclose(bank.qtext.low, [np.exp(-coh).min(), coh.min(), div.min()])
    np.testing.assert_allclose(bank.qtext.high, [np.exp(-coh).max(), coh.max(), div.max()])
    machine = _trajectories(5, seed=7, mean_lp=-6.0, vocab=5)  # far outside the bank: repetitive, unlikely
    alone = score_trajectory(machine[0], bank, "prompt 1").values["qtext"]
    expected = bank.qtext.score_endpoints(machine[0].coherence_end, machine[0].diversity_end)
    assert alone == pytest.approx(expected)
    # scoring other texts (with other ranges) changes nothing: nothing is fitted on scored texts
    for tr in machine[1:]:
        score_trajectory(tr, bank, "prompt 2")
    assert score_trajectory(machine[0], bank, "prompt 1").values["qtext"] == alone
    refit_on_machines = QText.fit_endpoints([t.coherence_end for t in machine], [t.diversity_end for t in machine])
    assert refit_on_machines.score_endpoints(machine[0].coherence_end, machine[0].diversity_end) != pytest.approx(alone)
    assert {"qtext", "pca_1", "pca_2"} <= set(SCORE_NAMES)


def test_pca_is_fitted_on_the_bank_features_only(bank):
    pca = bank.pca
    z = (bank.features - bank.features.mean(0)) / bank.features.std(0, ddof=1)
    eigval, eigvec = np.linalg.eigh(np.cov(z, rowvar=False))
    order = np.argsort(eigval)[::-1]
    np.testing.assert_allclose(pca.explained, eigval[order] / eigval.sum(), atol=1e-10)
    for k in range(2):
        np.testing.assert_allclose(np.abs(pca.components[k]), np.abs(eigvec[:, order[k]]), atol=1e-8)
        assert pca.components[k][np.argmax(np.abs(pca.components[k]))] > 0  # reproducible orientation
    machine = _trajectories(6, seed=3, vocab=4, mean_lp=-8.0)
    values = [score_trajectory(tr, bank, None).values for tr in machine]
    for tr, v in zip(machine, values):
        manual = ((tr.features() - bank.features.mean(0)) / bank.features.std(0, ddof=1)) @ pca.components[:2].T
        assert (v["pca_1"], v["pca_2"]) == pytest.approx(tuple(manual))
    # a PCA fitted on the scored texts would differ: the bank's loadings are not those of the machines
    on_machines = SummaryPCA.fit(np.stack([tr.features() for tr in machine]))
    assert not np.allclose(np.abs(on_machines.components[0]), np.abs(pca.components[0]), atol=1e-3)


def test_pca_matches_scikit_learn_and_survives_a_bank_round_trip(bank, tmp_path):
    decomposition = pytest.importorskip("sklearn.decomposition")
    z = (bank.features - bank.features.mean(0)) / bank.features.std(0, ddof=1)
    ref = decomposition.PCA(n_components=4).fit(z)
    np.testing.assert_allclose(bank.pca.explained, ref.explained_variance_ratio_, atol=1e-10)
    np.testing.assert_allclose(np.abs(bank.pca.transform(bank.features)), np.abs(ref.transform(z)), atol=1e-8)
    loaded = ReferenceBank.load(bank.save(tmp_path / "bank.npz"))
    np.testing.assert_allclose(loaded.pca.components, bank.pca.components)
    np.testing.assert_allclose(loaded.qtext.low, bank.qtext.low)


def test_pca_rejects_bad_features():
    with pytest.raises(ValueError, match=r"\(n, 4\) array"):
        SummaryPCA.fit(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="at least two reference texts"):
        SummaryPCA.fit(np.zeros((1, 4)))
    with pytest.raises(ValueError, match="NaN"):
        SummaryPCA.fit(np.array([[0, 0, 0, np.nan], [1, 1, 1, 1.0]]))
    constant = SummaryPCA.fit(np.array([[0, 1, 2, 5.0], [1, 2, 3, 5.0], [3, 2, 1, 5.0]]))
    assert np.all(np.isfinite(constant.transform(np.array([1, 1, 1, 9.0]))))  # a constant feature adds nothing
