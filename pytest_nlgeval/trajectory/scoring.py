"""Score machine continuations against a reference bank: the three comparisons and the baselines.

For each continuation (its first ``horizon`` tokens):

- temporal alignment: ``diversity_dtw`` / ``coherence_dtw``, the negative mean symmetric2 DTW distance
  to every human trajectory of the bank; ``*_dtw_paired`` uses only the human continuations of the same
  prompt (the paper's paired ablation);
- summary comparison with the matched human continuation: ``summary_mean``, ``summary_var``,
  ``summary_all`` (composites of standardised components, :mod:`.summary`); ``None`` when the bank
  holds no continuation of the prompt;
- likelihood under the human reference distribution: ``likelihood_mean`` and ``likelihood_var`` (log
  density of the mean and variance profiles) and ``likelihood`` (their sum, the log-likelihood of both
  profiles taken as independent);
- baselines that need no reference: ``diversity_end``, ``coherence_end`` (endpoint values) and the
  trajectory means and variances;
- the trajectory paper's two fixed baselines, normalised on the bank's references only
  (:mod:`.baselines`): ``qtext`` (fixed Q*Text of endpoint perplexity, coherence and diversity, 0 to 100)
  and ``pca_1``, ``pca_2`` (projections of the summary features on the bank's first two principal
  components; their signs are arbitrary).

    >>> scores = score_continuations(["Once upon a time"], ["there was a fox."], bank, lm)   # doctest: +SKIP
    >>> scores[0].values["diversity_dtw"]                                                    # doctest: +SKIP
    -0.0132
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from pytest_nlgeval.trajectory.dtw import dtw_distances
from pytest_nlgeval.trajectory.signals import DEFAULT_HORIZON, Trajectory
from pytest_nlgeval.trajectory.summary import composite, summary_components

__all__ = ["compute_trajectories", "score_trajectory", "score_continuations", "TrajectoryScores", "SCORE_NAMES"]

SCORE_NAMES = (
    "diversity_dtw",
    "coherence_dtw",
    "diversity_dtw_paired",
    "coherence_dtw_paired",
    "summary_mean",
    "summary_var",
    "summary_all",
    "likelihood",
    "likelihood_mean",
    "likelihood_var",
    "diversity_end",
    "coherence_end",
    "diversity_mean",
    "coherence_mean",
    "diversity_var",
    "coherence_var",
    "qtext",
    "pca_1",
    "pca_2",
)


def compute_trajectories(
    prompts: Sequence[str],
    continuations: Sequence[str],
    lm: Any,
    *,
    horizon: int = DEFAULT_HORIZON,
    progress: Callable[[int, int], None] | None = None,
) -> list[Trajectory]:
    """Trajectories of many continuations with one batched LM call (one forward pass per text)."""
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, not {horizon}")
    result = lm.score(list(continuations), list(prompts), max_tokens=horizon, progress=progress)
    return [Trajectory.from_tokens(ids, lp, horizon) for ids, lp in zip(result.token_ids, result.logprobs)]


@dataclass(frozen=True)
class TrajectoryScores:
    """All scores of one continuation (``values``: name -> float or None) and its trajectory."""

    trajectory: Trajectory
    values: dict[str, float | None]
    matched: list[int]
    #: Raw summary components (before standardisation), for refitting the z-scoring on a collection
    #: (:func:`~.metaeval.refit_summary`); None without a matched human continuation.
    components: np.ndarray | None = None

    def as_record(self, digits: int = 6) -> dict[str, Any]:
        """The values rounded to ``digits``, ``tokens`` and ``summary_components``: one line of
        ``nlgeval trajectory score`` output (without the input row's own fields)."""
        record: dict[str, Any] = {k: (None if v is None else round(v, digits)) for k, v in self.values.items()}
        record["tokens"] = self.trajectory.length
        record["summary_components"] = None if self.components is None else [float(c) for c in self.components]
        return record


def score_trajectory(
    tr: Trajectory, bank, prompt: str | None = None, *, likelihood_kind: str = "gaussian", divide_by_length: bool = True
) -> TrajectoryScores:
    """Score one machine trajectory against ``bank`` (a :class:`ReferenceBank`)."""
    if tr.length > bank.horizon:
        raise ValueError(f"the trajectory has {tr.length} tokens, beyond the bank's horizon {bank.horizon}")
    values: dict[str, float | None] = {}
    values["diversity_dtw"] = -float(np.mean(dtw_distances(tr.diversity, bank.diversity)))
    values["coherence_dtw"] = -float(np.mean(dtw_distances(tr.coherence, bank.coherence)))
    matched = bank.matched(prompt) if prompt is not None else []
    features = tr.features()
    comps = None
    if matched:
        values["diversity_dtw_paired"] = -float(
            np.mean(dtw_distances(tr.diversity, [bank.diversity[i] for i in matched]))
        )
        values["coherence_dtw_paired"] = -float(
            np.mean(dtw_distances(tr.coherence, [bank.coherence[i] for i in matched]))
        )
        # Several human continuations of one prompt: average their contrasts.
        comps = np.mean(
            [summary_components(features, bank.features[i], tr.length, divide=divide_by_length) for i in matched],
            axis=0,
        )
        z = bank.standardizer.transform(comps)
        for which in ("mean", "var", "all"):
            values[f"summary_{which}"] = float(composite(z, which))  # one text: a number
    else:
        for name in ("diversity_dtw_paired", "coherence_dtw_paired", "summary_mean", "summary_var", "summary_all"):
            values[name] = None
    lmean = float(bank.density(likelihood_kind, "mean").logpdf(features[[0, 1]])[0])
    lvar = float(bank.density(likelihood_kind, "var").logpdf(features[[2, 3]])[0])
    values.update(likelihood_mean=lmean, likelihood_var=lvar, likelihood=lmean + lvar)
    values.update(
        diversity_end=tr.diversity_end,
        coherence_end=tr.coherence_end,
        coherence_mean=float(features[0]),
        diversity_mean=float(features[1]),
        coherence_var=float(features[2]),
        diversity_var=float(features[3]),
    )
    projection = bank.pca.transform(features)
    values.update(
        qtext=float(bank.qtext.score_endpoints(tr.coherence_end, tr.diversity_end)),
        pca_1=float(projection[0]),
        pca_2=float(projection[1]),
    )
    return TrajectoryScores(tr, values, matched, comps)


def score_continuations(
    prompts: Sequence[str],
    continuations: Sequence[str],
    bank,
    lm: Any,
    *,
    horizon: int | None = None,
    likelihood_kind: str = "gaussian",
    progress: Callable[[int, int], None] | None = None,
) -> list[TrajectoryScores]:
    """Score many continuations: one batched LM call, then the comparisons for each (input order)."""
    bank.check_lm(lm)
    horizon = bank.horizon if horizon is None else horizon
    if horizon != bank.horizon:
        raise ValueError(
            f"the bank was fitted at horizon {bank.horizon}; score at the same horizon "
            f"(got {horizon}) or refit the bank with --horizon {horizon}"
        )
    trajectories = compute_trajectories(prompts, continuations, lm, horizon=horizon, progress=progress)
    return [score_trajectory(tr, bank, p, likelihood_kind=likelihood_kind) for tr, p in zip(trajectories, prompts)]
