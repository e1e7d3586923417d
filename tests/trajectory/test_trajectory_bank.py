"""ReferenceBank: fitting, .npz round trip without pickle, versioning, LM mismatch refusal, bands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_nlgeval.trajectory.bank import BankError, BankMismatchError, ReferenceBank
from pytest_nlgeval.trajectory.signals import Trajectory


class FakeLM:
    def __init__(self, model_id="m1", tokenizer="t" * 64, precision="fp32"):
        self.model_id = model_id
        self.tokenizer_sha256 = tokenizer
        self.model_ref = f"lm-{model_id}"
        self.fingerprint = {"precision": precision, "files": {}}


def _trajectories(n=8, seed=0, horizon=30):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        length = int(rng.integers(12, horizon + 1))
        ids = rng.integers(0, 40, size=length)
        out.append(Trajectory.from_tokens(ids, rng.normal(-4, 1, size=length), horizon))
    return out


def _bank(n=8, **kw):
    prompts = [f"prompt {i % 4}" for i in range(n)]
    return ReferenceBank.from_trajectories(
        prompts,
        _trajectories(n),
        lm={"model_id": "m1", "tokenizer_sha256": "t" * 64, "model_ref": "lm-m1", "fingerprint": {}},
        horizon=30,
        **kw,
    )


def test_round_trip_without_pickle(tmp_path):
    bank = _bank()
    path = bank.save(tmp_path / "bank.npz")
    with np.load(path, allow_pickle=False) as raw:  # readable with pickle disabled
        meta = json.loads(str(raw["meta"]))
        assert raw["prompts"].dtype.kind == "U"
    assert meta["format"] == "nlgeval-trajectory-bank" and meta["format_version"] == 1
    loaded = ReferenceBank.load(path)
    assert loaded.prompts == bank.prompts and loaded.horizon == 30 and loaded.lm["model_id"] == "m1"
    for a, b in zip(loaded.diversity, bank.diversity):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(loaded.coherence, bank.coherence):
        np.testing.assert_array_equal(a, b)
    q = np.array([-4.0, 0.95])
    for key, density in bank.densities.items():
        assert loaded.densities[key].logpdf(q)[0] == pytest.approx(density.logpdf(q)[0], rel=1e-12)
    np.testing.assert_array_equal(loaded.standardizer.mean, bank.standardizer.mean)


def test_mismatched_lm_is_refused():
    bank = _bank()
    bank.check_lm(FakeLM())
    with pytest.raises(BankMismatchError, match="tokenizer"):
        bank.check_lm(FakeLM(tokenizer="u" * 64))
    with pytest.raises(BankMismatchError, match="refit the bank"):
        bank.check_lm(FakeLM(model_id="m2"))


def test_foreign_missing_and_newer_files_are_refused(tmp_path):
    with pytest.raises(BankError, match="fit-bank"):
        ReferenceBank.load(tmp_path / "nope.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(BankError, match="not a readable reference bank"):
        ReferenceBank.load(tmp_path / "junk.npz")
    path = _bank().save(tmp_path / "b.npz")
    with np.load(path) as raw:
        arrays = {k: raw[k] for k in raw.files}
    meta = json.loads(str(arrays["meta"]))
    meta["format_version"] = 99
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "newer.npz", **arrays)
    with pytest.raises(BankError, match="version 99"):
        ReferenceBank.load(tmp_path / "newer.npz")
    del arrays["features"]
    meta["format_version"] = 1
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "damaged.npz", **arrays)
    with pytest.raises(BankError, match="features"):
        ReferenceBank.load(tmp_path / "damaged.npz")


def test_band_and_matching():
    bank = _bank()
    band = bank.band("diversity", (5.0, 95.0), min_references=3)
    assert band.shape == (2, 30)
    lengths = bank.lengths
    for t in range(30):
        reach = int(np.sum(lengths > t))
        assert np.isnan(band[0, t]) == (reach < 3)
    assert np.all(band[0][~np.isnan(band[0])] <= band[1][~np.isnan(band[1])])
    assert bank.matched("  prompt   1 ") == [1, 5]
    assert bank.matched("unknown") == []
    with pytest.raises(BankError, match="signal"):
        bank.band("fluency")


def test_too_few_or_too_long_references_are_refused():
    with pytest.raises(BankError, match="at least 3"):
        ReferenceBank.from_trajectories(["p"] * 2, _trajectories(2), lm={}, horizon=30)
    with pytest.raises(BankError, match="horizon"):
        ReferenceBank.from_trajectories(["p"] * 4, _trajectories(4), lm={}, horizon=5)


def test_summary_standardisation_uses_other_prompts_and_is_seeded():
    a, b = _bank(seed=1), _bank(seed=1)
    np.testing.assert_array_equal(a.standardizer.mean, b.standardizer.mean)
    assert np.all(np.isfinite(a.standardizer.scale) | np.isinf(a.standardizer.scale))


def _fixed_bank(diversities):
    return _fixed_bank_h(diversities, horizon=3)


def _fixed_bank_h(diversities, horizon):
    trajectories = []
    for d in diversities:
        d = np.asarray(d, dtype=float)
        trajectories.append(Trajectory(np.arange(d.size), np.full(d.size, -3.0), d, np.linspace(-3, -4, d.size)))
    return ReferenceBank.from_trajectories(
        [f"p{i}" for i in range(len(diversities))],
        trajectories,
        lm={"model_id": "m1", "tokenizer_sha256": "t" * 64, "model_ref": "lm-m1", "fingerprint": {}},
        horizon=horizon,
    )


def test_envelope_percentile_by_hand():
    # Per position, reference i stays on or above the q-th percentile while q <= 100 * (its rank) / (n - 1):
    # t=0 all tie (100 each); t=1 ranks 4,3,2,1,0; t=2 ranks 3,2,4,1,0 -> q_i = 75, 50, 50, 25, 0.
    bank = _fixed_bank([[1.0, 0.9, 0.8], [1.0, 0.8, 0.7], [1.0, 0.7, 0.9], [1.0, 0.6, 0.6], [1.0, 0.5, 0.5]])
    assert bank.envelope_percentile("diversity", 0.6) == pytest.approx(50.0)  # 3 of 5 reach 50
    assert bank.envelope_percentile("diversity", 0.8) == pytest.approx(25.0)  # 4 of 5 reach 25
    assert bank.envelope_percentile("diversity", 0.95) == pytest.approx(0.0)  # all 5: the minimum curve
    assert bank.envelope_percentile("diversity", 0.2) == pytest.approx(75.0)
    median = bank.band("diversity", (50.0,))[0]
    inside = [bool(np.all(np.asarray(d) >= median)) for d in bank.diversity]
    assert inside == [True, True, True, False, False]
    with pytest.raises(ValueError, match=r"coverage must be in \(0, 1\]"):
        bank.envelope_percentile("diversity", 0.0)
    with pytest.raises(BankError, match="signal 'entropy'"):
        bank.envelope_percentile("entropy", 0.9)


@pytest.mark.parametrize("coverage", [0.8, 0.9, 0.95])
def test_envelope_keeps_the_coverage_of_references_and_is_the_highest_such_level(coverage):
    rng = np.random.default_rng(1)
    # small vocabularies repeat n-grams early, so the references' diversity curves differ and cross
    trajectories = [
        Trajectory.from_tokens(
            rng.integers(0, 6 + i % 5, size=int(rng.integers(12, 31))), rng.normal(-4, 1, size=30), 30
        )
        for i in range(40)
    ]
    bank = ReferenceBank.from_trajectories(
        [f"p{i}" for i in range(40)],
        trajectories,
        lm={"model_id": "m1", "tokenizer_sha256": "t" * 64, "model_ref": "lm-m1", "fingerprint": {}},
        horizon=30,
    )
    level = bank.envelope_percentile("diversity", coverage)

    def share_inside(q):
        band = bank.band("diversity", (q,))[0]
        ok = [all(not np.isfinite(band[t]) or d[t] >= band[t] for t in range(d.size)) for d in bank.diversity]
        return float(np.mean(ok))

    assert share_inside(level) >= coverage
    assert share_inside(level + 0.5) < coverage
    # the pointwise 5th percentile keeps far fewer than 95% of the same references inside at every position
    assert share_inside(5.0) < 0.9


def test_envelope_coverage_holds_with_ties_and_ragged_lengths():
    # Diversity values are ratios of counts and tie often; levels like 100 * 4 / 7 round up by an ulp, which
    # must not push the curve above the value that set it.
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(5, 16))
        rows = [rng.choice([3, 4, 5, 6, 7], size=int(rng.integers(2, 9))) / 7.0 for _ in range(n)]
        bank = _fixed_bank_h(rows, horizon=8)
        for coverage in (0.3, 0.5, 0.8, 0.95, 1.0):
            level = bank.envelope_percentile("diversity", coverage)
            band = bank.band("diversity", (level,))[0]
            inside = [all(not np.isfinite(band[t]) or d[t] >= band[t] for t in range(d.size)) for d in bank.diversity]
            assert np.isfinite(level) and np.mean(inside) >= coverage, (rows, coverage, level)


def test_envelope_ignores_positions_one_reference_reaches():
    bank = _fixed_bank_h([[1.0, 0.9, 0.8, 0.7, 0.6], [1.0, 0.5], [1.0, 0.4]], horizon=5)
    level = bank.envelope_percentile("diversity", 0.3, min_references=1)
    assert np.isfinite(level) and level == pytest.approx(100.0)


def _arrays(tmp_path):
    path = _bank().save(tmp_path / "b.npz")
    with np.load(path) as raw:
        return {k: raw[k] for k in raw.files}


def _save_edited(tmp_path, arrays, name="edited.npz"):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda a: a.update(diversity=np.concatenate([a["diversity"], np.zeros(300)])),
            r"array 'diversity' has \d+ values but array 'lengths' adds up to \d+",
        ),
        (
            lambda a: a.update(coherence=a["coherence"][:-5]),
            r"array 'coherence' has \d+ values but array 'lengths' adds up to \d+",
        ),
        (lambda a: a.update(prompts=a["prompts"][:-1]), r"array 'prompts' has 7 prompts for 8 trajectories"),
        (
            lambda a: a.update(lengths=a["lengths"].astype(np.float64)),
            r"array 'lengths' must be a 1-D array of integers",
        ),
        (
            lambda a: a.update(lengths=np.where(np.arange(8) == 0, 99, a["lengths"])),
            r"array 'lengths' holds trajectory lengths from \d+ to 99; each must be between 1 and the horizon 30",
        ),
        (lambda a: a.update(prompts=np.arange(8)), r"array 'prompts' must be a 1-D array of strings"),
        (lambda a: a.update(features=a["features"][:, :3]), r"array 'features' has shape \(8, 3\), expected \(8, 4\)"),
        (lambda a: a.update(std_scale=a["std_scale"][:-1]), r"arrays 'std_mean' and 'std_scale' have"),
        (
            lambda a: a.update(density_kde_mean_points=a["density_kde_mean_points"][:-1]),
            r"arrays density_kde_mean_mean/cov/points have shapes",
        ),
        (
            lambda a: a.update(density_gaussian_var_cov=np.full((2, 2), np.nan)),
            r"array 'density_gaussian_var_cov' holds NaN",
        ),
        (
            lambda a: a.update(diversity=np.where(np.arange(a["diversity"].size) == 3, np.nan, a["diversity"])),
            r"array 'diversity' holds NaN or infinite values",
        ),
        (
            lambda a: a.update(coherence=np.where(np.arange(a["coherence"].size) == 0, np.inf, a["coherence"])),
            r"array 'coherence' holds NaN or infinite values",
        ),
        (lambda a: a.pop("std_mean"), r"array 'std_mean' is missing"),
        (
            lambda a: a.update(meta=np.array('{"format": "nlgeval-trajectory-bank", "format_v')),
            r"array 'meta' is not valid JSON",
        ),
        (
            lambda a: a.update(meta=np.array(a["meta"].item().replace('"horizon": 30', '"horizon": "30"'))),
            r"meta field 'horizon' must be a positive integer, got '30'",
        ),
        (
            lambda a: a.update(meta=np.array(a["meta"].item().replace('"n_references": 8', '"n_references": 9'))),
            r"meta says 9 references but array 'lengths' has 8",
        ),
    ],
)
def test_inconsistent_arrays_and_metadata_are_refused_naming_file_and_array(tmp_path, edit, message):
    arrays = _arrays(tmp_path)
    edit(arrays)
    path = _save_edited(tmp_path, arrays)
    with pytest.raises(BankError, match=message) as info:
        ReferenceBank.load(path)
    assert str(path) in str(info.value) and "refit it" in str(info.value)
    assert info.value.__cause__ is None or not isinstance(info.value.__cause__, json.JSONDecodeError)


def test_a_bank_that_validates_scores_like_the_one_saved(tmp_path):
    bank = _bank()
    loaded = ReferenceBank.load(bank.save(tmp_path / "ok.npz"))
    np.testing.assert_array_equal(loaded.band("coherence"), bank.band("coherence"))
    assert loaded.lengths.tolist() == bank.lengths.tolist()
