"""``assert_trajectory``: trajectory checks for stories, continuations and other open-ended output.

    from pytest_nlgeval import assert_trajectory

    def test_story_does_not_degenerate(generate):
        result = assert_trajectory(generate(prompt), prompt=prompt, bank="refs/stories.npz")
        result.assert_not_degenerate()           # diversity stays inside the human envelope
        result.diversity_dtw > -0.05             # close to human diversity trajectories
        result.likelihood > -20                  # a typical (mean, variance) profile for human text

Every field is a :class:`~pytest_nlgeval.core.score.Score` (kind ``"trajectory"``): comparing it with a
threshold is the assertion, and the check is recorded with the machine trajectory and the human band
percentiles in its details, which the HTML report plots. Fields (see :mod:`.scoring`):
``diversity_dtw``, ``coherence_dtw`` (negative mean DTW distance to all references),
``diversity_dtw_paired``, ``coherence_dtw_paired`` (to the human continuations of the same prompt),
``summary_mean``, ``summary_var``, ``summary_all`` (summary comparison with the matched human continuation),
``likelihood``, ``likelihood_mean``, ``likelihood_var`` (log density under the human reference
distribution), the reference-free baselines ``diversity_end``, ``coherence_end``, ``diversity_mean``,
``coherence_mean``, ``diversity_var``, ``coherence_var``, and the trajectory paper's fixed baselines
``qtext`` (Q*Text normalised on the bank) and ``pca_1``, ``pca_2`` (the bank's summary PCA).

The causal LM is the bank's (the shipped default LM unless the bank was fitted with another, e.g. a GGUF LM
with ``fit-bank --lm gguf:PATH``), or the run's ``--nlgeval-trajectory-lm``; a different ``lm`` is refused
unless it is the same model, tokenizer and precision (or context) the bank was fitted with.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pytest_nlgeval.core.score import Score
from pytest_nlgeval.trajectory.bank import BankError, ReferenceBank
from pytest_nlgeval.trajectory.scoring import SCORE_NAMES, TrajectoryScores, score_trajectory
from pytest_nlgeval.trajectory.signals import Trajectory

__all__ = ["assert_trajectory", "TrajectoryResult", "load_bank", "get_lm"]

BAND_PERCENTILES = (5.0, 50.0, 95.0)
#: Share of the bank's human continuations that stay inside the envelope of ``assert_not_degenerate``.
ENVELOPE_COVERAGE = 0.95


def load_bank(bank: str | os.PathLike | ReferenceBank, *, run=None) -> ReferenceBank:
    """A :class:`ReferenceBank` from a path, or as given. With ``run``
    (:class:`~pytest_nlgeval.core.run.Run`), a bank file is loaded once per run and file version."""
    if isinstance(bank, ReferenceBank):
        return bank
    path = Path(bank).expanduser().resolve()
    key = ("trajectory-bank", str(path), path.stat().st_mtime if path.exists() else 0.0)
    if run is None:
        return ReferenceBank.load(path)
    return run.resource(key, lambda: ReferenceBank.load(path))


def get_lm(
    model: str | os.PathLike | None = None,
    *,
    device: str | None = None,
    precision: str | None = None,
    n_ctx: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    run=None,
):
    """The causal-LM scorer for ``model`` (None: the default LM), created once per run and options and closed
    with the run (``run``: default the current one, :mod:`pytest_nlgeval.core.run`).

    ``model``: a causal-LM folder, ``gguf:PATH`` for a GGUF LM (:mod:`.gguf_lm`, the ``llm`` extra), or None.
    ``device``/``precision`` default to the pytest session's ``--nlgeval-device``/``--nlgeval-precision``;
    ``n_ctx`` is a GGUF LM's context; ``cache_dir`` puts its log-probabilities in that folder's score cache.
    """
    from pytest_nlgeval.trajectory.lm import DEFAULT_REFS, load_trajectory_lm

    if run is None:
        from pytest_nlgeval.core import run as _run

        run = _run.active()
    if device is None or precision is None:
        options = run.options
        device = device or options.get("device")
        precision = precision or options.get("precision")
    device = device or "auto"
    precision = precision or "auto"
    if precision in ("fp16", "int8"):
        precision = "auto"  # causal-LM folders ship fp32 graphs; the evaluator's precision does not apply
    model = None if model in DEFAULT_REFS else model
    key = (
        "trajectory-lm",
        str(model) if model is not None else None,
        device,
        precision,
        n_ctx,
        str(cache_dir) if cache_dir is not None else None,
    )
    return run.resource(
        key, lambda: load_trajectory_lm(model, device=device, precision=precision, n_ctx=n_ctx, cache_dir=cache_dir)
    )


def _lm_for_bank(bank: ReferenceBank, lm, run):
    """The bank's LM (or ``lm``, or the run's ``--nlgeval-trajectory-lm``), on the run's device and cache."""
    from pytest_nlgeval.trajectory.lm import DEFAULT_REFS, is_gguf

    options = run.options
    device, precision = options.get("device") or "auto", options.get("precision") or "auto"
    if lm is None or isinstance(lm, (str, os.PathLike)):
        # None: the run's --nlgeval-trajectory-lm, else the bank's; "default" is the default LM, bank or not
        ref = lm if lm is not None else (options.get("trajectory_lm") or bank.lm.get("model_ref"))
        ref = None if ref in DEFAULT_REFS else ref
        n_ctx = (bank.lm.get("fingerprint") or {}).get("n_ctx") if is_gguf(ref) else None
        cache_dir = options.get("cache_dir") if options.get("cache", True) else None
        lm = get_lm(ref, device=device, precision=precision, n_ctx=n_ctx, cache_dir=cache_dir, run=run)
    bank.check_lm(lm)
    return lm


def _rounded(values: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else round(float(v), 5) for v in values]


def _band_dict(band: np.ndarray) -> dict[str, list]:
    stop = _defined_prefix(band)
    return {key: _rounded(row[:stop]) for key, row in zip(("low", "median", "high"), band)}


def _defined_prefix(band: np.ndarray) -> int:
    """How many leading positions every row of ``band`` defines (a band stops where references run out)."""
    defined = np.all(np.isfinite(band), axis=0)
    return int(np.argmin(defined)) if not defined.all() else band.shape[1]


class TrajectoryResult:
    """The trajectory scores of one continuation; every field is a comparable :class:`Score`.

    ``recorder``: where comparisons of the fields are recorded (by default the current run's).
    """

    def __init__(
        self,
        scores: TrajectoryScores,
        bank: ReferenceBank,
        lm,
        *,
        continuation: str,
        prompt: str,
        likelihood_kind: str,
        recorder=None,
    ):
        self.scores = scores
        self.recorder = recorder
        self.bank = bank
        self.lm = lm
        self.continuation = continuation
        self.prompt = prompt
        self.likelihood_kind = likelihood_kind
        tr = scores.trajectory
        self._bands = {s: bank.band(s, BAND_PERCENTILES) for s in ("diversity", "coherence")}
        horizon = bank.horizon
        self.details: dict[str, Any] = {
            "inputs": {"output": continuation, "prompt": prompt},
            "trajectory": {
                "diversity": _rounded(tr.diversity),
                "coherence": _rounded(tr.coherence),
                "tokens": tr.length,
            },
            # Band rows stop where fewer than three references reach a position (no band beyond).
            "band": {signal: _band_dict(self._bands[signal]) for signal in ("diversity", "coherence")},
            "band_percentiles": dict(zip(("low", "median", "high"), BAND_PERCENTILES)),
            # The bound of assert_not_degenerate by default (see ReferenceBank.envelope_percentile).
            "envelope": self._envelope_details(bank),
            "horizon": horizon,
            "bank": {"path": bank.meta.get("path"), "references": bank.n_references, "matched": len(scores.matched)},
            "lm": bank.lm.get("model_ref"),
            "likelihood_kind": likelihood_kind,
            "values": {k: (None if v is None else round(v, 6)) for k, v in scores.values.items()},
        }

    @staticmethod
    def _envelope_details(bank: ReferenceBank) -> dict[str, Any]:
        level = bank.envelope_percentile("diversity", ENVELOPE_COVERAGE)
        curve = bank.band("diversity", (level,))
        return {
            "coverage": ENVELOPE_COVERAGE,
            "percentile": round(level, 6),
            "diversity": _rounded(curve[0][: _defined_prefix(curve)]),
        }

    @property
    def trajectory(self) -> Trajectory:
        return self.scores.trajectory

    def _score(self, name: str) -> Score:
        value = self.scores.values[name]
        if value is None:
            raise LookupError(
                f"{name} needs a human continuation of the same prompt, and the bank "
                f"({self.bank.meta.get('path', 'in memory')}) has none for prompt {self.prompt[:60]!r}; add one to "
                "the human file and refit the bank, or use diversity_dtw/likelihood, which compare with all references"
            )
        details = dict(self.details, field=name)
        return Score(
            value,
            name=name,
            kind="trajectory",
            details=details,
            evaluator_id=self.lm.fingerprint_id,
            evaluator_fingerprint=self.lm.fingerprint,
            explain=self._explain,
            recorder=self.recorder,
        )

    def _describe(self) -> list[str]:
        tr = self.trajectory
        v = self.scores.values
        return [
            f"continuation ({tr.length} tokens): {' '.join(self.continuation.split())[:100]!r}",
            f"diversity end {v['diversity_end']:.3f}, coherence end {v['coherence_end']:.3f}; "
            f"bank of {self.bank.n_references} human continuations, horizon {self.bank.horizon}",
        ]

    def _explain(self, score: Score, op: str, threshold: float) -> list[str]:
        lines = self._describe()
        leave = self.leaves_band()
        if leave is not None:
            lines.append(
                f"diversity leaves the human envelope at token {leave[0] + 1} "
                f"({leave[1]:.3f} < {self._bound_name()} {leave[2]:.3f})"
            )
        return lines

    def _level(self, percentile: float | None, coverage: float) -> float:
        if percentile is None:
            return self.bank.envelope_percentile("diversity", coverage)
        if not 0.0 <= float(percentile) <= 100.0:
            raise ValueError(f"percentile must be in [0, 100], got {percentile!r}")
        return float(percentile)

    def _bound_name(self, percentile: float | None = None, coverage: float = ENVELOPE_COVERAGE) -> str:
        if percentile is not None:
            return f"{percentile:g}th percentile of human continuations"
        level = self.bank.envelope_percentile("diversity", coverage)
        return (
            f"the envelope that {coverage:.0%} of the bank's human continuations stay above at every "
            f"position (pointwise {level:.3g}th percentile)"
        )

    def leaves_band(
        self, percentile: float | None = None, *, coverage: float = ENVELOPE_COVERAGE
    ) -> tuple[int, float, float] | None:
        """First position where diversity falls below the human envelope: (0-based t, value, bound), or None.

        By default the envelope is the pointwise percentile curve that ``coverage`` of the bank's human
        continuations stay on or above at every position (:meth:`ReferenceBank.envelope_percentile`); a
        ``percentile`` instead uses that pointwise percentile as it is.
        """
        return self._first_below(self.bank.band("diversity", (self._level(percentile, coverage),))[0])

    def _first_below(self, bound: np.ndarray) -> tuple[int, float, float] | None:
        div = self.trajectory.diversity
        for t in range(min(div.size, bound.size)):
            if np.isfinite(bound[t]) and div[t] < bound[t]:
                return t, float(div[t]), float(bound[t])
        return None

    def assert_not_degenerate(self, percentile: float | None = None, *, coverage: float = ENVELOPE_COVERAGE) -> bool:
        """Assert that diversity never drops below the human envelope.

        The envelope is the pointwise percentile curve that ``coverage`` (default 95%) of the bank's human
        continuations stay on or above at every position, so on the bank's own texts the check fails about
        ``1 - coverage`` of the time. ``percentile=5`` compares with the pointwise 5th percentile instead,
        which human texts cross somewhere far more often than 5% of the time.

        Recorded as the check ``diversity_band_margin >= 0`` (margin = the smallest ``machine - bound``
        over positions with a band); the failure names the token where the trajectory leaves the envelope.
        """
        __tracebackhide__ = True
        level = self._level(percentile, coverage)
        band = self.bank.band("diversity", (level,))[0]
        div = self.trajectory.diversity
        n = min(div.size, band.size)
        margins = div[:n] - band[:n]
        margins = margins[np.isfinite(margins)]
        if margins.size == 0:
            raise BankError("no position of the continuation has a human band (too few references reach it)")
        leave = self._first_below(band)
        bound_name = self._bound_name(percentile, coverage)

        def explain(score, op, threshold):
            lines = self._describe()
            if leave is not None:
                t, value, bound = leave
                lines.append(
                    f"diversity leaves the human envelope at token {t + 1} of {div.size}: {value:.3f} < "
                    f"{bound:.3f}, {bound_name}"
                )
                lines.append(f"text around token {t + 1}: {self._token_context(t)!r}")
            return lines

        score = Score(
            float(margins.min()),
            name="diversity_band_margin",
            kind="trajectory",
            details=dict(
                self.details,
                field="diversity_band_margin",
                percentile=level,
                coverage=None if percentile is not None else coverage,
                leaves_at=None if leave is None else leave[0] + 1,
            ),
            evaluator_id=self.lm.fingerprint_id,
            evaluator_fingerprint=self.lm.fingerprint,
            explain=explain,
            recorder=self.recorder,
        )
        return score >= 0.0

    def _token_context(self, t: int) -> str:
        ids = self.trajectory.token_ids
        lo = max(0, t - 12)
        try:
            return self.lm.tokenizer.decode([int(i) for i in ids[lo : t + 1]])
        except Exception:  # decoding is a courtesy in a message; never let it hide the failure
            return " ".join(str(int(i)) for i in ids[lo : t + 1])

    def as_dict(self) -> dict[str, float | None]:
        """All values as plain floats (None where the bank has no matched human continuation)."""
        return dict(self.scores.values)

    def __repr__(self) -> str:
        v = self.scores.values
        return (
            f"TrajectoryResult(tokens={self.trajectory.length}, diversity_dtw={v['diversity_dtw']:.4f}, "
            f"coherence_dtw={v['coherence_dtw']:.4f}, likelihood={v['likelihood']:.3f})"
        )


def _field(name: str):
    return property(lambda self: self._score(name), doc=f"The ``{name}`` score (see :mod:`.scoring`).")


for _name in SCORE_NAMES:
    setattr(TrajectoryResult, _name, _field(_name))


def assert_trajectory(
    continuation: str,
    *,
    prompt: str,
    bank: str | os.PathLike | ReferenceBank,
    lm=None,
    horizon: int | None = None,
    likelihood_kind: str = "gaussian",
) -> TrajectoryResult:
    """Measure ``continuation`` (given ``prompt``) and compare it with the human references of ``bank``.

    ``horizon`` (tokens scored) must equal the bank's (default 128, set by ``fit-bank --horizon``); None
    takes the bank's. ``lm``: None for the bank's LM (or ``--nlgeval-trajectory-lm``), a causal-LM folder
    path, ``gguf:PATH``, or a loaded scorer.
    ``likelihood_kind``: ``"gaussian"`` (full covariance), ``"diagonal"`` or ``"kde"``.

        result = assert_trajectory(story, prompt=prompt, bank="refs/stories.npz")
        result.diversity_dtw > -0.05
        result.assert_not_degenerate()
    """
    if not isinstance(continuation, str) or not continuation.strip():
        raise ValueError("assert_trajectory needs a non-empty continuation string")
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    from pytest_nlgeval.core import run as _run

    run = _run.active()  # looked up once: the device options and the recorder go down as arguments
    ref_bank = load_bank(bank, run=run)
    if horizon is not None and horizon != ref_bank.horizon:
        raise ValueError(
            f"the bank was fitted at horizon {ref_bank.horizon}; pass horizon={ref_bank.horizon} "
            f"or refit it with `nlgeval trajectory fit-bank ... --horizon {horizon}`"
        )
    scorer = _lm_for_bank(ref_bank, lm, run)
    result = scorer.score([continuation], [prompt], max_tokens=ref_bank.horizon)
    tr = Trajectory.from_tokens(result.token_ids[0], result.logprobs[0], ref_bank.horizon)
    scores = score_trajectory(tr, ref_bank, prompt, likelihood_kind=likelihood_kind)
    return TrajectoryResult(
        scores,
        ref_bank,
        scorer,
        continuation=continuation,
        prompt=prompt,
        likelihood_kind=likelihood_kind,
        recorder=run.recorder,
    )
