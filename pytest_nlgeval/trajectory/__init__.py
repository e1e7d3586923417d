"""Trajectory checks for open-ended generation (stories, continuations).

Coherence and diversity are measured on every prefix of a continuation and compared with human
references three ways ("Reference-Based Analysis of Coherence and Diversity in Open-Ended Text
Generation"; its public analysis code): DTW alignment with human
trajectories, summary comparison with the matched human continuation, and likelihood under the human
reference distribution.

Modules: :mod:`.signals` (the two signals), :mod:`.dtw` (symmetric2 DTW), :mod:`.summary`,
:mod:`.likelihood`, :mod:`.bank` (:class:`ReferenceBank`), :mod:`.scoring`, :mod:`.assertions`
(``assert_trajectory``), :mod:`.baselines` (fixed Q*Text and the summary PCA, fitted on the bank),
:mod:`.metaeval` (Spearman with prompt-cluster bootstrap), :mod:`.pairwise` (agreement with pairwise
preferences), :mod:`.humandata` (reading human judgement files), :mod:`.tables` (meta-evaluation
tables), :mod:`.plot` (inline SVG) and :mod:`.plugin` (the HTML report section).

    from pytest_nlgeval import assert_trajectory
    assert_trajectory(story, prompt=prompt, bank="refs/stories.npz").diversity_dtw > -0.05
"""

from __future__ import annotations

import importlib

_LAZY = {
    "assert_trajectory": "pytest_nlgeval.trajectory.assertions",
    "TrajectoryResult": "pytest_nlgeval.trajectory.assertions",
    "ReferenceBank": "pytest_nlgeval.trajectory.bank",
    "Trajectory": "pytest_nlgeval.trajectory.signals",
    "dtw_distance": "pytest_nlgeval.trajectory.dtw",
    "dtw_distances": "pytest_nlgeval.trajectory.dtw",
    "score_continuations": "pytest_nlgeval.trajectory.scoring",
    "bootstrap_spearman": "pytest_nlgeval.trajectory.metaeval",
    "pairwise_agreement": "pytest_nlgeval.trajectory.pairwise",
    "QText": "pytest_nlgeval.trajectory.baselines",
    "SummaryPCA": "pytest_nlgeval.trajectory.baselines",
    "trajectory_svg": "pytest_nlgeval.trajectory.plot",
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_nlgeval.trajectory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
