"""The reference bank: human trajectories and the distributions fitted on them, in one ``.npz`` file.

``nlgeval trajectory fit-bank HUMAN.jsonl -o bank.npz`` computes the trajectories of human continuations
with a causal LM and stores, without pickle (``np.load(..., allow_pickle=False)`` reads it):

- the human coherence and diversity trajectories (ragged, concatenated with their lengths) and prompts,
  so DTW compares with every reference and the summary comparison finds the human continuation of the
  same prompt;
- the summary features of every reference, the densities of the mean profile and of the variance
  profile (full Gaussian, diagonal Gaussian, KDE with Scott's bandwidth) and the standardisation of the
  summary components;
- the horizon and the identity of the LM and tokenizer that produced the numbers. Scores from another
  LM are not comparable with these trajectories, so :meth:`ReferenceBank.check_lm` refuses them.

Two baselines are derived from the stored references when first needed (nothing extra is stored):
:attr:`ReferenceBank.qtext`, the Q*Text min-max ranges of the references' endpoints, and
:attr:`ReferenceBank.pca`, the PCA of their summary features (:mod:`.baselines`).

The summary standardisation is fitted on human-vs-human contrasts: every reference is compared with a
reference of another prompt drawn by a seeded permutation, as if it were a machine continuation. That
is the fixed reference collection the trajectory paper asks for when scoring new texts; users with a
collection of machine outputs can refit it (:meth:`ReferenceBank.with_standardizer`).

    >>> bank = ReferenceBank.load("refs/stories.npz")          # doctest: +SKIP
    >>> bank.n_references, bank.horizon                         # doctest: +SKIP
    (50, 128)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.trajectory.baselines import QText, SummaryPCA
from pytest_nlgeval.trajectory.likelihood import KINDS, Density
from pytest_nlgeval.trajectory.signals import DEFAULT_HORIZON, FEATURE_NAMES, Trajectory
from pytest_nlgeval.trajectory.summary import Standardizer, summary_components

__all__ = ["ReferenceBank", "BankError", "BankMismatchError", "BANK_FORMAT", "BANK_VERSION", "lm_identity"]

BANK_FORMAT = "nlgeval-trajectory-bank"
BANK_VERSION = 1
PROFILES = {"mean": (0, 1), "var": (2, 3)}  # (coherence, diversity) mean profile and variance profile
MIN_REFERENCES = 3


class BankError(NLGEvalError, ValueError):
    """A bank file is missing, unreadable, of another format version, or too small for a comparison."""


class BankMismatchError(BankError):
    """The LM or tokenizer used for scoring differs from the one the bank was fitted with."""


def lm_identity(lm: Any) -> dict[str, Any]:
    """What a bank records about the LM: graph+tokenizer+precision id, tokenizer hash, reference, fingerprint."""
    return {
        "model_id": lm.model_id,
        "tokenizer_sha256": lm.tokenizer_sha256,
        "model_ref": lm.model_ref,
        "fingerprint": lm.fingerprint,
    }


def _normalise_prompt(prompt: str) -> str:
    return " ".join(str(prompt).split())


@dataclass(frozen=True)
class ReferenceBank:
    """Human reference trajectories with fitted distributions (see the module docstring)."""

    prompts: list[str]
    diversity: list[np.ndarray]
    coherence: list[np.ndarray]
    features: np.ndarray  # (n, 4) in FEATURE_NAMES order
    horizon: int
    lm: dict[str, Any]
    standardizer: Standardizer
    densities: dict[tuple[str, str], Density]  # (kind, profile) -> density
    meta: dict[str, Any] = field(default_factory=dict)

    # -- building ----------------------------------------------------------------------------------
    @classmethod
    def from_trajectories(
        cls,
        prompts: Sequence[str],
        trajectories: Sequence[Trajectory],
        *,
        lm: dict[str, Any],
        horizon: int = DEFAULT_HORIZON,
        seed: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> "ReferenceBank":
        """Fit a bank on precomputed human trajectories; ``lm`` is :func:`lm_identity` of their LM."""
        if len(prompts) != len(trajectories):
            raise BankError(f"{len(prompts)} prompts but {len(trajectories)} trajectories")
        if len(trajectories) < MIN_REFERENCES:
            raise BankError(
                f"a reference bank needs at least {MIN_REFERENCES} human continuations, got {len(trajectories)}"
            )
        for i, tr in enumerate(trajectories):
            if tr.length > horizon:
                raise BankError(f"reference {i} has {tr.length} tokens, more than the horizon {horizon}")
        features = np.stack([tr.features() for tr in trajectories])
        lengths = np.array([tr.length for tr in trajectories])
        norm = [_normalise_prompt(p) for p in prompts]
        # Human-vs-human contrasts for the summary standardisation: pair each reference with one of
        # another prompt (a seeded permutation; a reference paired with its own prompt is re-drawn).
        rng = np.random.default_rng(seed)
        n = len(trajectories)
        partner = rng.permutation(n)
        for i in range(n):
            tries = 0
            while (partner[i] == i or norm[partner[i]] == norm[i]) and tries < 20:
                partner[i] = rng.integers(n)
                tries += 1
        contrasts = np.stack([summary_components(features[i], features[partner[i]], int(lengths[i])) for i in range(n)])
        standardizer = Standardizer.fit(contrasts)
        densities = {
            (kind, name): Density.fit(features[:, list(cols)], kind)
            for kind in KINDS
            for name, cols in PROFILES.items()
        }
        info = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seed": seed}
        info.update(meta or {})
        return cls(
            list(prompts),
            [tr.diversity.copy() for tr in trajectories],
            [tr.coherence.copy() for tr in trajectories],
            features,
            int(horizon),
            dict(lm),
            standardizer,
            densities,
            info,
        )

    @classmethod
    def fit(
        cls,
        prompts: Sequence[str],
        continuations: Sequence[str],
        lm: Any,
        *,
        horizon: int = DEFAULT_HORIZON,
        seed: int = 0,
        meta: dict[str, Any] | None = None,
        progress=None,
    ) -> "ReferenceBank":
        """Compute the human trajectories with ``lm`` (a causal-LM scorer) and fit the bank."""
        from pytest_nlgeval.trajectory.scoring import compute_trajectories

        trajectories = compute_trajectories(prompts, continuations, lm, horizon=horizon, progress=progress)
        return cls.from_trajectories(prompts, trajectories, lm=lm_identity(lm), horizon=horizon, seed=seed, meta=meta)

    def with_standardizer(self, standardizer: Standardizer) -> "ReferenceBank":
        """The same bank with summary standardisation fitted elsewhere (e.g. on a machine collection)."""
        return replace(self, standardizer=standardizer)

    # -- queries -----------------------------------------------------------------------------------
    @property
    def n_references(self) -> int:
        return len(self.prompts)

    @property
    def lengths(self) -> np.ndarray:
        return np.array([d.size for d in self.diversity], dtype=np.int64)

    @cached_property
    def qtext(self) -> QText:
        """Fixed Q*Text normalised by the min-max ranges of the references' endpoints (:mod:`.baselines`)."""
        return QText.fit_endpoints([c[-1] for c in self.coherence], [d[-1] for d in self.diversity])

    @cached_property
    def pca(self) -> SummaryPCA:
        """PCA of the references' standardised summary features (:mod:`.baselines`); never of scored texts."""
        return SummaryPCA.fit(self.features)

    def matched(self, prompt: str) -> list[int]:
        """Indices of the references whose prompt equals ``prompt`` (whitespace-normalised)."""
        key = _normalise_prompt(prompt)
        return [i for i, p in enumerate(self.prompts) if _normalise_prompt(p) == key]

    def density(self, kind: str, profile: str) -> Density:
        if kind not in KINDS:
            raise BankError(f"likelihood kind {kind!r} is not one of {KINDS}")
        if profile not in PROFILES:
            raise BankError(f"profile {profile!r} is not one of {tuple(PROFILES)}")
        return self.densities[(kind, profile)]

    def band(
        self, signal: str, percentiles: Sequence[float] = (5.0, 50.0, 95.0), min_references: int = MIN_REFERENCES
    ) -> np.ndarray:
        """Percentiles of the human ``signal`` at every position: array (len(percentiles), horizon).

        Position ``t`` uses the references that reach it; positions fewer than ``min_references``
        references reach are NaN (no band there).
        """
        key = (signal, tuple(float(q) for q in percentiles), int(min_references))
        cache = self._bands
        if key not in cache:
            matrix = self._matrix(signal)
            out = np.full((len(percentiles), self.horizon), np.nan)
            counts = np.sum(np.isfinite(matrix), axis=0)
            cols = np.flatnonzero(counts >= max(1, min_references))
            if cols.size:
                # nanpercentile of a column is the percentile of the references that reach that position
                out[:, cols] = np.nanpercentile(matrix[:, cols], list(key[1]), axis=0)
            out.flags.writeable = False
            cache[key] = out
        return cache[key].copy()

    def _matrix(self, signal: str) -> np.ndarray:
        """The references' ``signal`` as rows of a (references, horizon) array, NaN beyond each length."""
        if signal not in self._matrices:
            series = self._signal(signal)
            matrix = np.full((len(series), self.horizon), np.nan)
            for i, values in enumerate(series):
                matrix[i, : values.size] = values[: self.horizon]
            self._matrices[signal] = matrix
        return self._matrices[signal]

    @cached_property
    def _bands(self) -> dict[tuple, np.ndarray]:
        return {}

    @cached_property
    def _matrices(self) -> dict[str, np.ndarray]:
        return {}

    def envelope_percentile(self, signal: str, coverage: float = 0.95, min_references: int = MIN_REFERENCES) -> float:
        """The pointwise lower percentile whose curve ``coverage`` of the references stay on or above everywhere.

        A pointwise 5th-percentile band is crossed somewhere by far more than 5% of human texts (each
        position is another chance). This calibrates the level instead, as global rank envelopes do
        (Myllymaki et al. 2017, "Global envelope tests for spatial processes", JRSS B 79(2)): with
        ``np.percentile``'s linear interpolation, reference ``i`` stays on or above the ``q``-th percentile
        curve at position ``t`` exactly when ``q <= 100 * r_it / (n_t - 1)``, where ``r_it`` is the last
        index of its value among the ``n_t`` sorted values there. So ``q_i = min_t`` of that bound, and the
        answer is the largest ``q`` that at least ``ceil(coverage * n)`` references' ``q_i`` reach. Positions
        fewer than ``min_references`` references reach have no band and do not count. In-sample: texts
        outside the bank stay inside somewhat less often than ``coverage``.
        """
        if not 0.0 < coverage <= 1.0:
            raise ValueError(f"coverage must be in (0, 1], got {coverage!r}")
        key = (signal, float(coverage), int(min_references))
        cache = self._envelopes
        if key not in cache:
            matrix = self._matrix(signal)
            level = np.full(matrix.shape[0], 100.0)
            for t in range(matrix.shape[1]):
                reach = np.flatnonzero(np.isfinite(matrix[:, t]))
                # a position one reference reaches is on its own curve at any level
                if reach.size < max(2, min_references):
                    continue
                values = matrix[reach, t]
                last = np.searchsorted(np.sort(values), values, side="right") - 1
                level[reach] = np.minimum(level[reach], 100.0 * last / (reach.size - 1))
            need = max(1, int(np.ceil(coverage * matrix.shape[0] - 1e-9)))
            q = float(np.sort(level)[::-1][need - 1])
            # 100 * r / (n - 1) can round up by an ulp, and np.percentile then lands a hair above the r-th
            # value, so the reference that sets the level would fall outside its own curve: step just below.
            cache[key] = max(0.0, q - 1e-9 * max(1.0, q))
        return cache[key]

    @cached_property
    def _envelopes(self) -> dict[tuple, float]:
        return {}

    def _signal(self, signal: str) -> list[np.ndarray]:
        if signal == "diversity":
            return self.diversity
        if signal == "coherence":
            return self.coherence
        raise BankError(f"signal {signal!r} is not 'diversity' or 'coherence'")

    def check_lm(self, lm: Any) -> None:
        """Raise :class:`BankMismatchError` unless ``lm`` is the LM (graph, tokenizer, precision) of the bank."""
        got = lm_identity(lm)
        if got["tokenizer_sha256"] != self.lm.get("tokenizer_sha256"):
            raise BankMismatchError(
                f"the reference bank was fitted with tokenizer {self.lm.get('tokenizer_sha256', '?')[:12]} "
                f"(LM {self.lm.get('model_ref')!r}) but the scoring LM {got['model_ref']!r} uses tokenizer "
                f"{got['tokenizer_sha256'][:12]}; token ids and trajectories are not comparable. Score with the "
                "bank's LM or refit the bank: `nlgeval trajectory fit-bank HUMAN.jsonl -o BANK.npz --lm ...`"
            )
        if got["model_id"] != self.lm.get("model_id"):
            raise BankMismatchError(
                f"the reference bank was fitted with LM {self.lm.get('model_ref')!r} (id {self.lm.get('model_id')}) "
                f"but scoring uses {got['model_ref']!r} (id {got['model_id']}, precision "
                f"{got['fingerprint'].get('precision')}); coherence from different LMs or precisions is not "
                "comparable. Score with the bank's LM or refit the bank with this one "
                "(`nlgeval trajectory fit-bank HUMAN.jsonl -o BANK.npz --lm ...`)"
            )

    # -- files -------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the bank as a compressed ``.npz`` (no pickled objects); returns the path."""
        path = Path(path)
        meta = {
            "format": BANK_FORMAT,
            "format_version": BANK_VERSION,
            "horizon": self.horizon,
            "lm": self.lm,
            "feature_names": list(FEATURE_NAMES),
            "n_references": self.n_references,
            "info": self.meta,
        }
        arrays: dict[str, Any] = {
            "meta": np.array(json.dumps(meta, sort_keys=True)),
            "prompts": np.array(self.prompts, dtype=str) if self.prompts else np.zeros(0, dtype="<U1"),
            "lengths": self.lengths,
            "diversity": np.concatenate(self.diversity),
            "coherence": np.concatenate(self.coherence),
            "features": self.features,
            "std_mean": self.standardizer.mean,
            "std_scale": self.standardizer.scale,
        }
        for (kind, profile), density in self.densities.items():
            arrays.update(density.to_arrays(f"density_{kind}_{profile}_"))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:  # a file object keeps numpy from appending a second .npz
            np.savez_compressed(handle, **arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "ReferenceBank":
        """Read a bank written by :meth:`save`; clear errors for a missing, foreign or newer file."""
        path = Path(path)
        if not path.is_file():
            raise BankError(
                f"reference bank {str(path)!r} does not exist; create it with "
                f"`nlgeval trajectory fit-bank HUMAN.jsonl -o {path}`"
            )
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except Exception as exc:  # zip, format and pickle errors all mean "not a bank"
            raise BankError(
                f"{str(path)!r} is not a readable reference bank ({exc}); refit it with `nlgeval trajectory fit-bank`"
            ) from exc
        if "meta" not in arrays:
            raise BankError(f"{str(path)!r} is not a reference bank (no 'meta' entry)")
        meta = _read_meta(path, arrays["meta"])
        if meta.get("format") != BANK_FORMAT:
            raise BankError(f"{str(path)!r} is a {meta.get('format')!r} file, not a {BANK_FORMAT}")
        if meta.get("format_version") != BANK_VERSION:
            raise BankError(
                f"{str(path)!r} has bank format version {meta.get('format_version')}; this version "
                f"of pytest-nlgeval reads version {BANK_VERSION}. Refit the bank with "
                "`nlgeval trajectory fit-bank`"
            )
        _validate(path, meta, arrays)
        lengths = arrays["lengths"].astype(np.int64)
        cuts = np.cumsum(lengths)[:-1]
        densities = {
            (kind, profile): Density.from_arrays(kind, arrays, f"density_{kind}_{profile}_")
            for kind in KINDS
            for profile in PROFILES
        }
        return cls(
            prompts=[str(p) for p in arrays["prompts"]],
            diversity=np.split(arrays["diversity"].astype(np.float64), cuts),
            coherence=np.split(arrays["coherence"].astype(np.float64), cuts),
            features=arrays["features"].astype(np.float64),
            horizon=int(meta["horizon"]),
            lm=meta["lm"],
            standardizer=Standardizer(arrays["std_mean"].astype(np.float64), arrays["std_scale"].astype(np.float64)),
            densities=densities,
            meta=dict(meta.get("info") or {}, path=str(path)),
        )


_REFIT = "the file is damaged or was edited; refit it with `nlgeval trajectory fit-bank HUMAN.jsonl -o BANK.npz`"


def _bad(path: Path, problem: str) -> BankError:
    return BankError(f"reference bank {str(path)!r}: {problem}; {_REFIT}")


def _read_meta(path: Path, raw: np.ndarray) -> dict[str, Any]:
    """The bank's JSON metadata (a 0-d string array), checked field by field."""
    if raw.shape != () or raw.dtype.kind != "U":
        raise _bad(path, f"array 'meta' must be one JSON string, got dtype {raw.dtype} and shape {raw.shape}")
    try:
        meta = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise _bad(path, f"array 'meta' is not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(meta, dict):
        raise _bad(path, f"array 'meta' must hold a JSON object, got {type(meta).__name__}")
    if meta.get("format") != BANK_FORMAT or meta.get("format_version") != BANK_VERSION:
        return meta  # another format or version: the caller names that
    horizon = meta.get("horizon")
    if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1:
        raise _bad(path, f"meta field 'horizon' must be a positive integer, got {horizon!r}")
    lm = meta.get("lm")
    if not isinstance(lm, dict):
        raise _bad(path, f"meta field 'lm' must be an object (the LM the bank was fitted with), got {lm!r}")
    if "feature_names" in meta and list(meta["feature_names"] or []) != list(FEATURE_NAMES):
        raise _bad(path, f"meta field 'feature_names' is {meta['feature_names']!r}, expected {list(FEATURE_NAMES)}")
    n = meta.get("n_references")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
        raise _bad(path, f"meta field 'n_references' must be a count, got {n!r}")
    if meta.get("info") is not None and not isinstance(meta["info"], dict):
        raise _bad(path, f"meta field 'info' must be an object, got {type(meta['info']).__name__}")
    return meta


def _validate(path: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Check every array's presence, dtype and length against the others and the metadata."""

    def need(name: str, kinds: str, ndim: int, what: str) -> np.ndarray:
        if name not in arrays:
            raise _bad(path, f"array {name!r} is missing")
        array = arrays[name]
        if array.dtype.kind not in kinds or array.ndim != ndim:
            raise _bad(path, f"array {name!r} must be {what}, got dtype {array.dtype} and shape {array.shape}")
        return array

    def finite(name: str, array: np.ndarray) -> None:
        if not np.all(np.isfinite(array)):
            raise _bad(path, f"array {name!r} holds NaN or infinite values")

    prompts = need("prompts", "U", 1, "a 1-D array of strings")
    lengths = need("lengths", "iu", 1, "a 1-D array of integers")
    n = lengths.size
    if meta.get("n_references") is not None and meta["n_references"] != n:
        raise _bad(path, f"meta says {meta['n_references']} references but array 'lengths' has {n}")
    if n < MIN_REFERENCES:
        raise _bad(path, f"array 'lengths' has {n} references, fewer than the {MIN_REFERENCES} a bank needs")
    if prompts.size != n:
        raise _bad(path, f"array 'prompts' has {prompts.size} prompts for {n} trajectories (array 'lengths')")
    horizon = int(meta["horizon"])
    if lengths.min() < 1 or lengths.max() > horizon:
        raise _bad(
            path,
            f"array 'lengths' holds trajectory lengths from {int(lengths.min())} to "
            f"{int(lengths.max())}; each must be between 1 and the horizon {horizon}",
        )
    total = int(lengths.sum())
    for name in ("diversity", "coherence"):
        values = need(name, "f", 1, "a 1-D array of floats")
        if values.size != total:
            raise _bad(path, f"array {name!r} has {values.size} values but array 'lengths' adds up to {total}")
        finite(name, values)  # a NaN would otherwise surface deep inside DTW, naming neither file nor array
    features = need("features", "f", 2, f"a 2-D float array (references x {len(FEATURE_NAMES)})")
    if features.shape != (n, len(FEATURE_NAMES)):
        raise _bad(path, f"array 'features' has shape {features.shape}, expected ({n}, {len(FEATURE_NAMES)})")
    finite("features", features)
    std_mean = need("std_mean", "f", 1, "a 1-D array of floats")
    std_scale = need("std_scale", "f", 1, "a 1-D array of floats")
    if std_mean.size != std_scale.size or std_mean.size == 0:
        raise _bad(
            path,
            f"arrays 'std_mean' and 'std_scale' have {std_mean.size} and {std_scale.size} values; "
            "they need one per summary component",
        )
    finite("std_mean", std_mean)
    if np.any(np.isnan(std_scale)) or np.any(std_scale <= 0):
        raise _bad(path, "array 'std_scale' must hold positive scales")
    for kind in KINDS:
        for profile, cols in PROFILES.items():
            prefix = f"density_{kind}_{profile}_"
            d = len(cols)
            mean = need(prefix + "mean", "f", 1, f"a 1-D float array of {d} values")
            cov = need(prefix + "cov", "f", 2, f"a {d} x {d} float array")
            points = need(prefix + "points", "f", 2, f"a 2-D float array with {d} columns")
            rows = n if kind == "kde" else 0
            if mean.shape != (d,) or cov.shape != (d, d) or points.shape != (rows, d):
                raise _bad(
                    path,
                    f"arrays {prefix}mean/cov/points have shapes {mean.shape}, {cov.shape}, "
                    f"{points.shape}; expected ({d},), ({d}, {d}), ({rows}, {d})",
                )
            for name, array in ((prefix + "mean", mean), (prefix + "cov", cov), (prefix + "points", points)):
                finite(name, array)
