"""The numbers and rows of a report, computed once from a results dict.

The HTML report and the Markdown summaries both read a :class:`ReportView`, so the page and the pull-request
comment can never disagree about how many checks failed or which ones regressed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from pytest_nlgeval.core.checks import FAILING_OUTCOMES, count_outcomes, outcome_of
from pytest_nlgeval.core.score import explanation_lines
from pytest_nlgeval.report.baseline_view import BaselineCheck, BaselineView, read_baseline
from pytest_nlgeval.report.results import validate_results
from pytest_nlgeval.util.numbers import format_threshold

__all__ = ["CheckRow", "ScoreGroup", "ReportView", "build_view"]

_OPERATORS = {">": lambda s, t: s > t, ">=": lambda s, t: s >= t, "<": lambda s, t: s < t, "<=": lambda s, t: s <= t}


@dataclass
class CheckRow:
    """One check as the report's table shows it."""

    check: Mapping[str, Any]
    baseline: BaselineCheck | None

    @property
    def key(self) -> str:
        return self.check["key"]

    @property
    def passed(self) -> bool:
        return bool(self.check["passed"])

    @property
    def regressed(self) -> bool:
        return self.baseline is not None and self.baseline.status == "regression"

    @property
    def outcome(self) -> str:
        """What the run counts the check as, following pytest's verdict on its test (``OUTCOMES``)."""
        return outcome_of(self.check)

    @property
    def xfailed(self) -> bool:
        """The check failed inside a test pytest reports xfailed: the expected outcome, never a failure."""
        return self.outcome == "xfailed"

    @property
    def failing(self) -> bool:
        """Counted as a failure: a failed check, or a passed one in an xfail(strict=True) test that passed."""
        return self.outcome in FAILING_OUTCOMES

    @property
    def status(self) -> str:
        """``failed``, ``xpassed-strict`` (passed inside a strict xfail test: a failure, as pytest counts it),
        ``regressed``, ``xfailed`` (failed as its xfail test expects), ``xpassed`` (passed inside a non-strict
        xfail test) or ``passed`` (a check that failed and regressed is shown as failed)."""
        outcome = self.outcome
        if outcome != "passed":
            return outcome
        return "regressed" if self.regressed else "passed"

    @property
    def threshold_text(self) -> str:
        """``operator threshold`` as the report prints it (at most four decimals), or ``""``."""
        if self.threshold is None:
            return ""
        return f"{self.check.get('operator') or ''} {format_threshold(self.threshold)}".strip()

    @property
    def label(self) -> str:
        return group_label(self.check)

    @property
    def score(self) -> float | None:
        return _finite(self.check.get("score"))

    @property
    def threshold(self) -> float | None:
        return _finite(self.check.get("threshold"))

    @property
    def margin(self) -> float | None:
        """Signed distance from the threshold in the direction that passes (negative = failing by that much)."""
        score, threshold, op = self.score, self.threshold, self.check.get("operator")
        if score is None or threshold is None or op not in _OPERATORS:
            return None
        return score - threshold if op in (">", ">=") else threshold - score

    @property
    def details(self) -> Mapping[str, Any]:
        details = self.check.get("details")
        return details if isinstance(details, Mapping) else {}

    @property
    def explanation(self) -> list[str]:
        """A dimension check's failure explanation as the terminal prints it, less the per-unit scores the
        page tabulates: the weakest claim, the span the source does not support and what it says instead, the
        explicit checks' findings and the deciding source window."""
        if self.check.get("kind") != "dimension":
            return []
        try:
            return explanation_lines(self.details, per_unit=False)
        except (KeyError, TypeError, ValueError, IndexError):  # a results file written by hand or another version
            return []


def _scale_of(row: CheckRow) -> tuple[float, float]:
    """A judged check's scale (``details["scale"]``, e.g. [1, 5]); [0, 1] for everything else."""
    scale = row.details.get("scale") if row.check.get("kind") == "judged" else None
    if isinstance(scale, list) and len(scale) == 2:
        low, high = (_finite(v) for v in scale)
        if low is not None and high is not None and low < high:
            return (low, high)
    return (0.0, 1.0)


@dataclass
class ScoreGroup:
    """All checks of one dimension or metric (same kind, task and name): the distribution chart's data."""

    label: str
    kind: str
    scores: list[float] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)
    #: per score: it failed inside an xfail test (drawn apart from the failures, not counted as one)
    expected: list[bool] = field(default_factory=list)
    #: per score: what the run counts it as (``OUTCOMES``); the counts below read these
    outcomes: list[str] = field(default_factory=list)
    thresholds: list[tuple[str, float]] = field(default_factory=list)  # distinct (operator, threshold)
    #: the range the chart's axis spans at least: [0, 1] for the evaluator's dimensions, the judge's scale
    #: (e.g. 1 to 5) for judged checks
    domain: tuple[float, float] = (0.0, 1.0)

    @property
    def n(self) -> int:
        return len(self.scores)

    def _expected(self) -> list[bool]:
        return list(self.expected[: len(self.passed)]) + [False] * (len(self.passed) - len(self.expected))

    def _outcomes(self) -> list[str]:
        if len(self.outcomes) == len(self.passed):
            return self.outcomes
        derived = ["passed" if p else "xfailed" if x else "failed" for p, x in zip(self.passed, self._expected())]
        return list(self.outcomes) + derived[len(self.outcomes) :]

    @property
    def failed(self) -> int:
        return sum(1 for o in self._outcomes() if o in FAILING_OUTCOMES)

    @property
    def xfailed(self) -> int:
        return self._outcomes().count("xfailed")

    @property
    def xpassed(self) -> int:
        return self._outcomes().count("xpassed")

    @property
    def thresholds_text(self) -> list[str]:
        """Each distinct threshold as ``operator threshold`` with at most four decimals."""
        return [f"{op} {format_threshold(t)}" for op, t in self.thresholds]

    @property
    def mean(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None


@dataclass
class ReportView:
    results: Mapping[str, Any]
    rows: list[CheckRow]
    groups: list[ScoreGroup]
    baseline: BaselineView | None
    checks: int
    passed: int
    failed: int
    tests: int
    failed_tests: int
    xfailed: int = 0  # failed checks inside xfail tests: expected, not failures
    xpassed: int = 0  # passed checks inside non-strict xfail tests that passed (strict ones are in failed)
    #: pytest's summary line of the run (``summary["tests"]``: all tests that ran), e.g. "3 failed, 2 passed"
    pytest_line: str | None = None

    @property
    def regressions(self) -> int:
        return self.baseline.regression_count if self.baseline is not None else 0

    @property
    def verdict(self) -> str:
        """``failed`` (a threshold failed), ``regressed`` (only regressions), ``passed``, or ``empty``."""
        if self.failed:
            return "failed"
        if self.regressions:
            return "regressed"
        return "passed" if self.checks else "empty"

    @property
    def headline(self) -> str:
        parts = [
            f"{self.checks} check{'s' if self.checks != 1 else ''}",
            f"{self.passed} passed",
            f"{self.failed} failed",
        ]
        strict = sum(1 for r in self.rows if r.outcome == "xpassed-strict")
        if strict:
            parts[-1] += f" ({strict} passed in a strict xfail test)"
        if self.xfailed:
            parts.append(f"{self.xfailed} expected to fail (xfail)")
        if self.xpassed:
            parts.append(f"{self.xpassed} passed unexpectedly (xpass)")
        if self.baseline is not None:
            parts.append(f"{self.regressions} regression{'s' if self.regressions != 1 else ''}")
        return ", ".join(parts)

    @property
    def failures(self) -> list[CheckRow]:
        """Failed checks, the furthest below their threshold first."""
        failed = [r for r in self.rows if r.failing]
        return sorted(failed, key=lambda r: (r.margin if r.margin is not None else 0.0, r.key))

    @property
    def evaluators(self) -> Mapping[str, Any]:
        value = self.results.get("evaluators")
        return value if isinstance(value, Mapping) else {}

    @property
    def environment(self) -> Mapping[str, Any]:
        value = self.results.get("environment")
        return value if isinstance(value, Mapping) else {}

    def rows_of_kind(self, kind: str) -> list[CheckRow]:
        return [r for r in self.rows if r.check.get("kind") == kind]


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def group_label(check: Mapping[str, Any]) -> str:
    """``task/name`` for dimensions, ``kind:name`` for other kinds (``metric:helpful``), as the baseline
    comparison labels its suites, so a dimension has one name across the whole report."""
    name, task, kind = check.get("name", "?"), check.get("task"), check.get("kind", "dimension")
    if kind == "dimension":
        return f"{task}/{name}" if task else str(name)
    return f"{kind}:{name}"


_STATUS_ORDER = {"failed": 0, "xpassed-strict": 1, "regressed": 2, "xfailed": 3, "xpassed": 4, "passed": 5}


def build_view(results: Mapping[str, Any]) -> ReportView:
    """Validate ``results`` and compute everything the report and the summaries show.

    >>> view = build_view(load_results("results.json"))  # doctest: +SKIP
    >>> view.failed, view.regressions  # doctest: +SKIP
    (2, 1)
    """
    validate_results(results)
    baseline = read_baseline(results.get("baseline"))
    rows = [CheckRow(check, baseline.checks.get(check["key"]) if baseline else None) for check in results["checks"]]
    # Failures and regressions first; within a status the worst margin first, then by key for a stable page.
    rows.sort(key=lambda r: (_STATUS_ORDER[r.status], r.margin if r.margin is not None else math.inf, r.key))

    groups: dict[str, ScoreGroup] = {}
    for row in rows:
        if row.score is None or row.check.get("kind") == "trajectory":
            continue  # trajectory checks get their own plots; their fields are not on one scale
        group = groups.get(row.label)
        if group is None:
            group = groups[row.label] = ScoreGroup(
                label=row.label, kind=row.check.get("kind", "dimension"), domain=_scale_of(row)
            )
        group.scores.append(row.score)
        group.passed.append(row.passed)
        group.expected.append(row.xfailed)
        group.outcomes.append(row.outcome)
        op, threshold = row.check.get("operator"), row.threshold
        if isinstance(op, str) and threshold is not None and (op, threshold) not in group.thresholds:
            group.thresholds.append((op, threshold))

    raw_summary = results.get("summary")
    summary: Mapping[str, Any] = raw_summary if isinstance(raw_summary, Mapping) else {}
    counted = count_outcomes(r.check for r in rows)
    # The results file's own summary is what CI reported; fall back to counting when it is absent.
    checks = _count(summary, "checks", len(rows))
    failed = _count(summary, "failed", counted["failed"])
    passed = _count(summary, "passed", counted["passed"])
    nodeids = {r.check["nodeid"] for r in rows}
    failed_tests = len({r.check["nodeid"] for r in rows if r.failing})
    return ReportView(
        results=results,
        rows=rows,
        groups=sorted(groups.values(), key=lambda g: g.label),
        baseline=baseline,
        checks=checks,
        passed=passed,
        failed=failed,
        tests=len(nodeids),
        failed_tests=failed_tests,
        xfailed=_count(summary, "xfailed", counted["xfailed"]),
        xpassed=_count(summary, "xpassed", counted["xpassed"]),
        pytest_line=_pytest_line(summary.get("tests")),
    )


#: the order of pytest's summary line
_PYTEST_ORDER = ("failed", "passed", "skipped", "xfailed", "xpassed", "error")


def _pytest_line(tests: Any) -> str | None:
    """``summary["tests"]`` as pytest's summary line says it ("3 failed, 2 passed, 2 xfailed"), or None."""
    if not isinstance(tests, Mapping):
        return None
    said = [
        f"{tests[k]} {k}{'s' if k == 'error' and tests[k] != 1 else ''}"  # pytest's plural: "2 errors"
        for k in _PYTEST_ORDER
        if isinstance(tests.get(k), int) and tests[k]
    ]
    return ", ".join(said) or None


def _count(summary: Mapping[str, Any], name: str, default: int) -> int:
    value = summary.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else default
