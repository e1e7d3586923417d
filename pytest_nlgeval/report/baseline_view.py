"""The baseline comparison (``results["baseline"]``) read into rows the report and the summaries show.

The comparison is written by :mod:`pytest_nlgeval.baseline` (``Comparison.to_dict()`` plus ``path``):
``checks`` (one verdict per check: ``key``, ``status``, ``old``, ``new``, ``change``, ``tolerance``,
``higher_is_better``), ``suites`` (one per dimension: ``label``, ``n``, ``old_mean``, ``new_mean``, ``change``,
``low``/``high`` of the bootstrap interval, ``status``), ``evaluator_change`` and a top-level ``status``
(``regression``, ``passed``, or ``error``/``refused``/``updated``/``not updated`` with ``error``/``reason``).
It is read defensively (a list or an object keyed by check key; ``ci: [low, high]`` as well as ``low``/``high``),
and a comparison in no recognisable shape is shown raw in the report rather than dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

__all__ = ["BaselineCheck", "BaselineDimension", "BaselineView", "read_baseline"]

_REGRESSION = "regression"
_IMPROVEMENT = "improvement"


@dataclass(frozen=True)
class BaselineCheck:
    """One check compared with its stored baseline entry."""

    key: str
    status: str  # "regression" | "improvement" | "unchanged" | "new" | "removed" | other text from the source
    old: float | None
    new: float | None
    delta: float | None
    tolerance: float | None
    nodeid: str | None = None
    name: str | None = None
    higher_is_better: bool = True
    reason: str | None = None

    @property
    def gain(self) -> float | None:
        """The change in the check's good direction (negative = worse), for ordering regressions."""
        if self.delta is None:
            return None
        return self.delta if self.higher_is_better else -self.delta


@dataclass(frozen=True)
class BaselineDimension:
    """The suite-level (paired bootstrap) comparison of one dimension or metric."""

    label: str
    n: int | None
    old_mean: float | None
    new_mean: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    tolerance: float | None
    status: str
    confidence: float | None = None
    higher_is_better: bool = True


@dataclass
class BaselineView:
    """Everything the report shows about the baseline comparison."""

    path: str | None = None
    checks: dict[str, BaselineCheck] = field(default_factory=dict)
    dimensions: list[BaselineDimension] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: Mapping[str, Any] | None = None  # kept for the fallback view when nothing could be read
    recognised: bool = True
    status: str | None = None  # the comparison's own verdict: regression, passed, error, refused, updated, ...
    error: str | None = None  # why no comparison was made (status error/refused)

    @property
    def regressions(self) -> list[BaselineCheck]:
        """Per-check regressions, largest drop first."""
        found = [c for c in self.checks.values() if c.status == _REGRESSION]
        return sorted(found, key=lambda c: (c.gain if c.gain is not None else 0.0, c.key))

    @property
    def dimension_regressions(self) -> list[BaselineDimension]:
        return [d for d in self.dimensions if d.status == _REGRESSION]

    @property
    def improvements(self) -> list[BaselineCheck]:
        return [c for c in self.checks.values() if c.status == _IMPROVEMENT]

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks.values() if c.status == status)

    @property
    def regression_count(self) -> int:
        """Regressed checks plus suite-level dimension regressions (the number that fails CI)."""
        return len(self.regressions) + len(self.dimension_regressions)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _first(entry: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in entry and entry[name] is not None:
            return entry[name]
    return None


def _status(entry: Mapping[str, Any]) -> str:
    value = _first(entry, "status", "verdict", "outcome", "result")
    if isinstance(value, str) and value:
        return value.lower()
    if entry.get("regression") is True or entry.get("regressed") is True:
        return _REGRESSION
    if entry.get("improvement") is True or entry.get("improved") is True:
        return _IMPROVEMENT
    return "unchanged"


def _entries(value: Any, key_field: str) -> Iterable[Mapping[str, Any]]:
    """Accept a list of objects or an object keyed by ``key_field``."""
    if isinstance(value, Mapping):
        for key, entry in value.items():
            if isinstance(entry, Mapping):
                yield {key_field: key, **entry}
    elif isinstance(value, list):
        for entry in value:
            if isinstance(entry, Mapping):
                yield entry


def _read_check(entry: Mapping[str, Any]) -> BaselineCheck | None:
    key = _first(entry, "key", "check")
    if not isinstance(key, str):
        return None
    old = _number(_first(entry, "old", "baseline", "base", "old_score", "baseline_score"))
    new = _number(_first(entry, "new", "score", "head", "new_score", "current"))
    delta = _number(_first(entry, "delta", "change", "diff"))
    if delta is None and old is not None and new is not None:
        delta = new - old
    return BaselineCheck(
        key=key,
        status=_status(entry),
        old=old,
        new=new,
        delta=delta,
        tolerance=_number(entry.get("tolerance")),
        nodeid=entry.get("nodeid") if isinstance(entry.get("nodeid"), str) else None,
        name=entry.get("name") if isinstance(entry.get("name"), str) else None,
        higher_is_better=entry.get("higher_is_better") is not False,
        reason=entry.get("reason") if isinstance(entry.get("reason"), str) else None,
    )


def _interval(entry: Mapping[str, Any]) -> tuple[float | None, float | None]:
    ci = _first(entry, "ci", "interval", "ci95", "bootstrap_ci")
    if isinstance(ci, Mapping):
        return _number(_first(ci, "low", "lo", "lower")), _number(_first(ci, "high", "hi", "upper"))
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        return _number(ci[0]), _number(ci[1])
    return (_number(_first(entry, "ci_low", "low", "lower")), _number(_first(entry, "ci_high", "high", "upper")))


def _read_dimension(entry: Mapping[str, Any]) -> BaselineDimension | None:
    name = _first(entry, "label", "name", "dimension", "metric", "group")
    if not isinstance(name, str):
        return None
    task, kind = entry.get("task"), entry.get("kind")
    label = name
    if isinstance(task, str) and task and "/" not in name and ":" not in name:
        label = f"{task}/{name}"
    if isinstance(kind, str) and kind not in ("dimension", "") and not label.startswith(kind):
        label = f"{kind}:{label}"
    low, high = _interval(entry)
    old_mean = _number(_first(entry, "old_mean", "baseline_mean", "base_mean", "old"))
    new_mean = _number(_first(entry, "new_mean", "mean", "head_mean", "new"))
    delta = _number(_first(entry, "delta", "mean_delta", "change", "diff"))
    if delta is None and old_mean is not None and new_mean is not None:
        delta = new_mean - old_mean
    n = _first(entry, "n", "cases", "count")
    return BaselineDimension(
        label=label,
        n=n if isinstance(n, int) and not isinstance(n, bool) else None,
        old_mean=old_mean,
        new_mean=new_mean,
        delta=delta,
        ci_low=low,
        ci_high=high,
        tolerance=_number(entry.get("tolerance")),
        status=_status(entry),
        confidence=_number(entry.get("confidence")),
        higher_is_better=entry.get("higher_is_better") is not False,
    )


def read_baseline(raw: Mapping[str, Any] | None) -> BaselineView | None:
    """Read ``results["baseline"]``; None when the run was not compared with a baseline."""
    if not raw:
        return None
    view = BaselineView(raw=raw)
    path = _first(raw, "path", "file", "baseline")
    view.path = path if isinstance(path, str) else None
    for entry in _entries(_first(raw, "checks", "cases", "per_check") or [], "key"):
        check = _read_check(entry)
        if check is not None:
            view.checks[check.key] = check
    # Some writers list regressions/new/removed keys separately instead of giving every check a status.
    for status, names in (
        (_REGRESSION, ("regressions",)),
        ("new", ("new",)),
        ("removed", ("removed",)),
        (_IMPROVEMENT, ("improvements",)),
    ):
        listed = _first(raw, *names)
        if isinstance(listed, list):
            for entry in listed:
                if isinstance(entry, str) and entry not in view.checks:
                    view.checks[entry] = BaselineCheck(entry, status, None, None, None, None)
                elif isinstance(entry, Mapping):
                    check = _read_check({"status": status, **entry})
                    if check is not None and check.key not in view.checks:
                        view.checks[check.key] = check
    for entry in _entries(_first(raw, "suites", "dimensions", "suite", "groups") or [], "label"):
        dimension = _read_dimension(entry)
        if dimension is not None:
            view.dimensions.append(dimension)
    view.dimensions.sort(key=lambda d: (d.status != _REGRESSION, d.label))
    for name in ("notes", "warnings", "messages"):
        notes = raw.get(name)
        if isinstance(notes, list):
            view.notes.extend(str(note) for note in notes)
        elif isinstance(notes, str):
            view.notes.append(notes)
    change = _first(raw, "evaluator_change", "evaluator_changed")
    if isinstance(change, Mapping):
        for pair in change.get("pairs") or []:
            if isinstance(pair, Mapping):
                differences = "; ".join(str(d) for d in pair.get("differences") or []) or "fingerprint differs"
                view.notes.append(
                    f"evaluator changed since the baseline ({pair.get('old')} -> {pair.get('new')}, "
                    f"{pair.get('checks')} checks): {differences}; tolerances were widened by the "
                    "measured drift"
                )
        drift = change.get("drift")
        if isinstance(drift, Mapping) and drift:
            parts = [f"{label} {_fmt_drift(value)}" for label, value in sorted(drift.items())]
            view.notes.append("measured cross-evaluator drift: " + ", ".join(parts))
        unmeasured = change.get("unmeasured")
        if unmeasured:
            view.notes.append(
                "drift could not be measured (no case kept its inputs) for: " + ", ".join(map(str, unmeasured))
            )
    elif change:
        view.notes.append(f"evaluator changed since the baseline: {change if isinstance(change, str) else 'yes'}")
    own_status = raw.get("status")
    view.status = own_status if isinstance(own_status, str) else None
    error = _first(raw, "error", "reason")
    if isinstance(error, str):
        view.error = error
    if view.status == "updated":
        view.notes.append(
            f"the baseline was re-recorded in this run ({raw.get('entries', '?')} entries); nothing was compared"
        )
    view.recognised = bool(view.checks or view.dimensions or view.error or view.status == "updated")
    return view


def _fmt_drift(value: Any) -> str:
    if isinstance(value, Mapping) and _number(value.get("mean_abs_diff")) is not None:
        return f"{value['mean_abs_diff']:.4f} ({value.get('cases', '?')} cases)"
    return str(value)
