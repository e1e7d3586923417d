"""Errors of the baseline comparison: every one names the file (and line) or the evaluator that is wrong."""
from __future__ import annotations

__all__ = ["BaselineError", "BaselineFormatError", "EvaluatorMismatchError"]


class BaselineError(Exception):
    """Base class: a baseline could not be read, written or compared. Never means "passed"."""


class BaselineFormatError(BaselineError):
    """A baseline or results file is not valid: corrupted, hand-edited wrongly, or a merge conflict.

    ``path`` and ``line`` (1-based, None when unknown) locate the problem::

        try:
            load_baseline("nlgeval-baseline.json")
        except BaselineFormatError as exc:
            print(exc.path, exc.line, exc)
    """

    def __init__(self, path: str, line: int | None, problem: str, fix: str | None = None) -> None:
        self.path, self.line, self.problem, self.fix = path, line, problem, fix
        where = f"{path}, line {line}" if line is not None else path
        message = f"invalid baseline file {where}: {problem}"
        if fix:
            message += f". {fix}"
        super().__init__(message)


class EvaluatorMismatchError(BaselineError):
    """Scores of the baseline and of this run come from different evaluators.

    ``differences`` lists human-readable lines such as ``"precision: fp32 -> int8"``.
    """

    def __init__(self, old_id: str, new_id: str, differences: list[str], n_checks: int) -> None:
        self.old_id, self.new_id, self.differences, self.n_checks = old_id, new_id, list(differences), n_checks
        what = "; ".join(differences) if differences else "fingerprint details were not recorded"
        super().__init__(
            f"refusing to compare scores made by different evaluators ({n_checks} checks): baseline evaluator "
            f"{old_id}, this run {new_id}; differs in {what}. Scores from different model files, providers or "
            "precisions are not comparable: re-record the baseline with this evaluator "
            "(--nlgeval-baseline-update), or pass --nlgeval-baseline-allow-evaluator-change "
            "(`nlgeval compare --allow-evaluator-change`) to compare with tolerances widened by the measured drift"
        )
