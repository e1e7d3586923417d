"""Errors of the baseline comparison: every one names the file (and line) or the evaluator that is wrong."""

from __future__ import annotations

from pytest_nlgeval.errors import NLGEvalError

__all__ = ["BaselineError", "BaselineFormatError", "BaselineLockError", "EvaluatorMismatchError", "KeyMismatchError"]


class BaselineError(NLGEvalError):
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


class BaselineLockError(BaselineError):
    """Another process kept the baseline file locked (it was updating it) for longer than this one waits."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(f"could not update the baseline {path}: {reason}")


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


class KeyMismatchError(BaselineError):
    """The run's check keys do not line up with the baseline's: comparing them would compare (almost) nothing.

    Raised when no check of the run has a baseline entry, or when most of the run's checks are new while as
    many baseline entries did not run: the signature of keys that moved (another rootdir, renamed tests),
    not of a ``-k`` subset. ``hint`` says what the keys have in common, when something was found.
    """

    def __init__(
        self,
        baseline: str | None,
        n_head: int,
        n_base: int,
        n_common: int,
        n_new: int,
        n_removed: int,
        example_new: str | None,
        example_removed: str | None,
        hint: str | None = None,
    ) -> None:
        self.n_head, self.n_base, self.n_common = n_head, n_base, n_common
        self.n_new, self.n_removed, self.hint = n_new, n_removed, hint
        where = f"the baseline {baseline}" if baseline else "the baseline"
        if n_head == 0:
            what = f"no nlgeval check ran, so none of the {n_base} entries of {where} was compared"
        elif n_common == 0:
            what = f"none of the {n_head} checks of this run has an entry in {where} ({n_base} entries)"
        else:
            what = (
                f"only {n_common} of the {n_head} checks of this run have an entry in {where}; {n_new} are new "
                f"and {n_removed} entries did not run"
            )
        message = f"refusing to compare: {what}"
        if example_new and example_removed:
            message += f" (e.g. this run has {example_new!r}, the baseline {example_removed!r})"
        if hint:
            message += f". {hint}"
        message += (
            ". Check keys are NODEID::NAME::INDEX with node ids relative to pytest's rootdir; run pytest "
            "from the same folder with the same ini file as when the baseline was recorded, and write "
            "path options as --nlgeval-baseline=PATH (a separate path argument takes part in rootdir "
            "detection). If the tests were renamed or moved, re-record the baseline with "
            "--nlgeval-baseline-update"
        )
        super().__init__(message)
