"""The criterion judges of a run: one per judge LM, sharing the run's counts of calls, tokens and failures.

The plugin's ``judged`` fixture and ``assert_judged`` ask :func:`run_judge` for the judge of the run they
are in (:mod:`pytest_nlgeval.core.run`); the run keeps the judges as its resources and knows nothing else
of them.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["judge_report", "run_judge"]

_COUNTS = ("judges", "counts")


def _counts(run) -> tuple[Any, Any]:
    from pytest_nlgeval.judges.criterion import JudgeStats
    from pytest_nlgeval.llm.cache import LLMUsage

    return run.resource(_COUNTS, lambda: (JudgeStats(), LLMUsage()))


def run_judge(run, lm=None):
    """The criterion judge (:class:`~pytest_nlgeval.judges.criterion.CriterionJudge`) of ``run``'s configured
    judge LM, or of ``lm`` (a model id or an LM object); created on first use. Every judge of the run counts
    its calls, tokens, retries and parse failures together (:func:`judge_report`)."""
    key = ("judges", lm if isinstance(lm, str) or lm is None else id(lm))

    def make():
        from pytest_nlgeval.judges.criterion import build_judge, judge_options

        stats, usage = _counts(run)
        options = run.options
        cache_dir = options.get("judge_cache_dir")
        if cache_dir is None:
            from pytest_nlgeval.core.cache import DEFAULT_CACHE_DIR

            cache_dir = os.path.join(os.fspath(options.get("cache_dir") or DEFAULT_CACHE_DIR), "llm")
        judge = build_judge(
            judge_options(options),
            lm=lm,
            cache_dir=cache_dir,
            cache=bool(options.get("cache", True)),
            stats=stats,
            usage=usage,
        )
        judge.recorder = lambda: run.recorder  # the judged fixture's scores are this run's checks
        return judge

    return run.resource(key, make)


def judge_report(run) -> dict | None:
    """LLM calls, cache hits, tokens, judgments, retries and parse failures of ``run``'s judges; None when
    nothing was judged."""
    if not run.has_resource(_COUNTS):
        return None
    stats, usage = _counts(run)
    return {**usage.to_dict(), **stats.to_dict()}
