"""Check records: one per comparison of a score with a threshold, passed or failed.

A pytest session keeps its :class:`CheckRecorder` in its run (:mod:`pytest_nlgeval.core.run`); a
:class:`~pytest_nlgeval.core.score.Score` carries the recorder its comparisons go to, handed in by the
assertion that made it, and outside pytest there is none (comparisons work unchanged, unrecorded). The recorder knows
the running test (node id, ``nlgeval`` marker options) and numbers the checks of each name within a test, so a
check's ``key`` (``nodeid::name::index``) is stable across runs. Fields follow docs/results-schema.md.
"""

from __future__ import annotations

from pytest_nlgeval.util.numbers import format_threshold

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

__all__ = ["Check", "CheckRecorder"]


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

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready record: NaN/inf become None, numpy values plain numbers, other objects strings."""
        data = asdict(self)
        data["details"] = _jsonable(data["details"])
        if data["tolerance"] is None:
            del data["tolerance"]
        if not data["xfail"]:
            del data["xfail"]
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
