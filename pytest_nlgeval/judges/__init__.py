"""Criterion judges: an LLM judges an output on a criterion written in a sentence (G-Eval's form filling and
probability weighting), through the LLM layer (:mod:`pytest_nlgeval.llm`).

:mod:`.criterion` holds the judge, its prompts and its settings; :mod:`.session` the judges of a run.
"""

from pytest_nlgeval.judges.criterion import (
    RAG_CRITERIA,
    CriterionJudge,
    JudgedParseError,
    JudgeNotConfigured,
    JudgeStats,
    Judgment,
    build_judge,
    judge_options,
)

__all__ = [
    "CriterionJudge",
    "JudgeNotConfigured",
    "JudgedParseError",
    "JudgeStats",
    "Judgment",
    "RAG_CRITERIA",
    "build_judge",
    "judge_options",
]
