"""Check records: one per comparison of a score with a threshold, passed or failed.

A pytest session keeps its :class:`CheckRecorder` in its run (:mod:`pytest_nlgeval.core.run`); a
:class:`~pytest_nlgeval.core.score.Score` carries the recorder its comparisons go to, handed in by the
assertion that made it, and outside pytest there is none (comparisons work unchanged, unrecorded). The recorder knows
the running test (node id, ``nlgeval`` marker options) and numbers the checks of each name within a test, so a
check's ``key`` (``nodeid::name::index``) is stable across runs. Fields follow docs/results-schema.md.

A check's ``passed`` is its comparison; its ``outcome`` is what the run counts it as, following pytest's verdict
on its test (:func:`check_outcome`): a check inside a test pytest reports as xfailed is ``xfailed``, a passed
one inside an unexpectedly passing xfail test is ``xpassed`` (``xpassed-strict`` when the marker is strict,
which pytest reports as failed). The totals of the terminal table, the results file, the report and
``nlgeval summary`` all count outcomes (:func:`count_outcomes`), so they agree with pytest's summary line.
"""

from __future__ import annotations

from pytest_nlgeval.util.numbers import format_threshold

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping

__all__ = [
    "Check",
    "CheckRecorder",
    "FAILING_OUTCOMES",
    "OUTCOMES",
    "TEST_OUTCOMES",
    "check_outcome",
    "count_outcomes",
    "outcome_of",
]

#: what a check counts as: passed, failed, xfailed (failed as its xfail test expects), xpassed (passed in an xfail
#: test that pytest reports as XPASS) and xpassed-strict (the same under ``strict=True``: pytest reports it failed)
OUTCOMES = ("passed", "failed", "xfailed", "xpassed", "xpassed-strict")
#: the outcomes that make a run fail, as they make pytest's exit status 1
FAILING_OUTCOMES = frozenset({"failed", "xpassed-strict"})
#: pytest's verdict on a test, as the plugin reads it from the test's reports
TEST_OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "xpassed-strict")


def check_outcome(passed: bool, test_outcome: str | None) -> str:
    """What a check counts as, from its comparison and pytest's verdict on its test (None: not known): every
    check of a test pytest reports xfailed is expected-failed with it; a passed check of an XPASS test is
    xpassed (strict or not); otherwise the comparison decides.

    >>> check_outcome(False, "xfailed"), check_outcome(True, "xpassed-strict"), check_outcome(False, "failed")
    ('xfailed', 'xpassed-strict', 'failed')
    """
    if test_outcome == "xfailed":
        return "xfailed"
    if not passed:
        return "failed"
    if test_outcome in ("xpassed", "xpassed-strict"):
        return test_outcome
    return "passed"


def outcome_of(check: Mapping[str, Any]) -> str:
    """The ``outcome`` of a check of a results file; for a file that has none (written by an earlier version),
    derived from ``passed`` and ``xfail`` as that version counted it."""
    outcome = check.get("outcome")
    if outcome in OUTCOMES:
        return str(outcome)
    return check_outcome(bool(check.get("passed")), "xfailed" if check.get("xfail") else None)


def count_outcomes(checks: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The totals of a list of checks as pytest's summary line counts tests: ``failed`` includes the strict
    xpasses, ``xpassed`` only the others."""
    counts = {"checks": 0, "passed": 0, "failed": 0, "xfailed": 0, "xpassed": 0}
    for check in checks:
        outcome = outcome_of(check)
        counts["checks"] += 1
        counts["failed" if outcome in FAILING_OUTCOMES else outcome] += 1
    return counts


@dataclass
class Check:
    """One recorded comparison (a row of the results file's ``checks``)."""

    key: str
    nodeid: str
    kind: str  # "dimension" | "metric" | "trajectory" | "aggregate"
    name: str
    task: str | None
    index: int
    score: float
    operator: str
    threshold: float
    passed: bool
    evaluator: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    tolerance: float | None = None  # from the test's nlgeval(tolerance=...) marker, for baseline comparison
    xfail: bool = False  # the test is marked xfail: a failed check there is expected (e.g. a demonstration)
    outcome: str | None = None  # what the run counts it as (OUTCOMES); set when pytest has reported the test

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready record: NaN/inf become None, numpy values plain numbers, other objects strings."""
        data = asdict(self)
        data["details"] = _jsonable(data["details"])
        if data["tolerance"] is None:
            del data["tolerance"]
        if not data["xfail"]:
            del data["xfail"]
        if data["outcome"] is None:
            del data["outcome"]
        for key in ("score", "threshold"):
            if isinstance(data[key], float) and not math.isfinite(data[key]):
                data[key] = None  # JSON has no NaN/inf
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Check":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def _jsonable(value: Any) -> Any:
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` accepts (details come from any engine)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "tolist"):  # numpy scalars and arrays, without importing numpy
        return _jsonable(value.tolist())
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


class CheckRecorder:
    """Collects the checks of one process (one pytest session or xdist worker)."""

    def __init__(self, on_record: Callable[[Check], None] | None = None) -> None:
        self.checks: list[Check] = []
        self.evaluators: dict[str, dict] = {}
        self.on_record = on_record
        self.nodeid: str | None = None
        self.item = None  # the running pytest.Item, for record_property
        self.marker: dict[str, Any] = {}
        self.xfail = False
        self._counters: dict[tuple[str, str], int] = {}

    def start_test(self, nodeid: str, item=None, marker: dict | None = None, xfail: bool = False) -> None:
        self.nodeid, self.item, self.marker, self.xfail = nodeid, item, dict(marker or {}), bool(xfail)

    def end_test(self) -> None:
        self.nodeid, self.item, self.marker, self.xfail = None, None, {}, False

    def add_evaluator(self, evaluator_id: str, fingerprint: dict) -> None:
        self.evaluators.setdefault(evaluator_id, dict(fingerprint))

    def record(
        self,
        *,
        kind: str,
        name: str,
        task: str | None,
        score: float,
        operator: str,
        threshold: float,
        passed: bool,
        evaluator: str | None = None,
        details: dict | None = None,
    ) -> Check:
        nodeid = self.nodeid or "<outside a test>"
        index = self._counters.get((nodeid, name), 0)
        self._counters[(nodeid, name)] = index + 1
        tolerance = self.marker.get("tolerance")
        check = Check(
            key=f"{nodeid}::{name}::{index}",
            nodeid=nodeid,
            kind=kind,
            name=name,
            task=task,
            index=index,
            score=float(score),
            operator=operator,
            threshold=float(threshold),
            passed=bool(passed),
            evaluator=evaluator,
            details=dict(details or {}),
            tolerance=None if tolerance is None else float(tolerance),
            xfail=self.xfail,
        )
        self.checks.append(check)
        if self.item is not None:
            # record_property's storage: shows up as <property> in JUnit XML.
            verdict = "passed" if passed else "failed"
            self.item.user_properties.append(
                (f"nlgeval:{name}:{index}", f"{float(score):.4f} {operator} {format_threshold(threshold)} {verdict}")
            )
        if self.on_record is not None:
            self.on_record(check)
        return check
