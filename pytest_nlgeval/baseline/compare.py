"""Verdicts of a run against a baseline: per check, and per suite (all cases of one dimension).

Rules (docs/baselines.md has the reasoning):

* **per check**: a change against the check's direction (``>``: higher is better, ``<``: lower is better)
  larger than the check tolerance is a *regression*; a change the other way larger than the tolerance an
  *improvement*; anything else *unchanged*. A non-finite score where the baseline had a number is a regression.
* **per suite**: for every (kind, task, name) with at least :data:`MIN_SUITE_CASES` paired cases, a paired
  bootstrap (:mod:`~pytest_nlgeval.baseline.bootstrap`) of the mean change. A *regression* needs both the 95%
  interval entirely on the bad side of zero and the mean change beyond the suite tolerance; an improvement
  mirrors it. Noise alone rarely moves a whole interval, and a tiny but consistent drift does not exceed
  the tolerance, so both are needed.
* **the baseline's direction**: a paired check is judged in the direction its baseline entry records, so a run
  that flips a check's comparison (``> 0.7`` to ``< 1.0``) cannot turn a falling score into an "improvement".
  A changed assertion (the direction flipped, or a threshold loosened: lowered under ``>``, raised under ``<``,
  ``>`` made ``>=`` at the same threshold) is reported and fails the comparison until the baseline is
  re-recorded (``--nlgeval-baseline-update`` accepts it).
* **new checks** (no baseline entry) are reported; ``new_checks="notice"`` (default) lets them pass,
  ``"fail"`` fails the comparison until the baseline is re-recorded (pytest-regressions' behaviour).
* **removed checks** (in the baseline, not in this run) are reported and never fail: ``-k`` subsets and
  deselected tests are normal. Re-recording keeps their entries.
* **keys that do not line up** refuse the comparison (:class:`KeyMismatchError`): when no check of the run
  has a baseline entry (or no check ran at all), or when more than half of the run's checks are new and at
  least as many entries did not run. That is what a changed rootdir or a mass rename looks like; comparing
  would report "no regression" over nothing.
* **evaluators**: if a paired check was scored by a different evaluator (fingerprint id), the comparison is
  refused (:class:`EvaluatorMismatchError`, naming what differs) unless ``allow_evaluator_change``. Then the
  cross-evaluator drift of each dimension is measured as the mean absolute score difference over the cases
  whose inputs (texts) did not change, which both evaluators scored; the check and suite tolerances of that
  dimension widen by it. Cases of a dimension with no unchanged input cannot separate drift from a real
  change: they are reported *incomparable* (not a pass, not a failure).

Example::

    comparison = compare(load_baseline("nlgeval-baseline.json"), Baseline.from_results(results), seed=0)
    comparison.failed, [v.key for v in comparison.regressions]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_nlgeval.baseline.bootstrap import BootstrapResult, paired_bootstrap
from pytest_nlgeval.baseline.errors import BaselineError, EvaluatorMismatchError, KeyMismatchError
from pytest_nlgeval.baseline.store import Baseline, BaselineEntry
from pytest_nlgeval.baseline.tolerances import Tolerances

__all__ = [
    "MIN_SUITE_CASES",
    "NEW_CHECK_POLICIES",
    "CheckVerdict",
    "Comparison",
    "EvaluatorChange",
    "SuiteVerdict",
    "compare",
    "changed_assertion",
    "describe_fingerprint_difference",
    "group_label",
    "same_evaluator",
]

MIN_SUITE_CASES = 5  # below this a percentile interval over resampled cases is not worth reporting
NEW_CHECK_POLICIES = ("notice", "fail")
_EPS = 1e-12  # scores equal up to float noise are not "beyond" a tolerance of the same size


def group_label(kind: str, task: str | None, name: str) -> str:
    """``summarization/consistency`` for dimensions with a task, ``metric:helpful`` for the other kinds."""
    if kind == "dimension":
        return f"{task}/{name}" if task else name
    return f"{kind}:{name}"


@dataclass(frozen=True)
class CheckVerdict:
    """The verdict on one check. ``change`` is new - old in the score's own direction-free unit."""

    key: str
    nodeid: str
    kind: str
    task: str | None
    name: str
    status: str  # regression | improvement | unchanged | new | removed | incomparable
    old: float | None
    new: float | None
    tolerance: float | None
    higher_is_better: bool
    drift: float = 0.0
    reason: str | None = None
    #: how this run's assertion differs from the baseline's when it flipped or loosened (it fails), else None
    assertion: str | None = None

    @property
    def change(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old

    @property
    def label(self) -> str:
        return group_label(self.kind, self.task, self.name)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["change"] = self.change
        return data


@dataclass(frozen=True)
class SuiteVerdict:
    """The verdict on the mean change of all paired cases of one dimension/metric."""

    kind: str
    task: str | None
    name: str
    status: str  # regression | improvement | unchanged | too few cases
    n: int
    old_mean: float | None
    new_mean: float | None
    tolerance: float
    higher_is_better: bool
    drift: float = 0.0
    bootstrap: BootstrapResult | None = None

    @property
    def change(self) -> float | None:
        return None if self.bootstrap is None else self.bootstrap.statistic

    @property
    def label(self) -> str:
        return group_label(self.kind, self.task, self.name)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["label"] = self.label
        data["change"] = self.change
        data["low"] = None if self.bootstrap is None else self.bootstrap.low
        data["high"] = None if self.bootstrap is None else self.bootstrap.high
        return data


@dataclass(frozen=True)
class EvaluatorChange:
    """Evaluator pairs that differ between baseline and run, and the drift measured per dimension."""

    pairs: tuple[tuple[str | None, str | None, tuple[str, ...], int], ...]  # (old id, new id, differences, checks)
    drift: dict[str, tuple[float, int]]  # label -> (mean |new - old| on unchanged inputs, number of such cases)
    unmeasured: tuple[str, ...] = ()  # labels whose drift could not be measured

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": [{"old": o, "new": n, "differences": list(d), "checks": c} for o, n, d, c in self.pairs],
            "drift": {label: {"mean_abs_diff": m, "cases": c} for label, (m, c) in sorted(self.drift.items())},
            "unmeasured": list(self.unmeasured),
            "method": "mean absolute score difference between the two evaluators over the cases whose "
            "inputs are unchanged; check and suite tolerances of the dimension widen by it",
        }


@dataclass
class Comparison:
    """All verdicts of one comparison; ``failed`` is what CI gates on."""

    checks: list[CheckVerdict]
    suites: list[SuiteVerdict]
    new_checks: str = "notice"
    evaluator_change: EvaluatorChange | None = None
    seed: int = 0
    replicates: int = 2000
    confidence: float = 0.95
    tolerances: Tolerances = field(default_factory=Tolerances)
    baseline_source: str | None = None
    head_source: str | None = None

    def _with(self, status: str) -> list[CheckVerdict]:
        return [v for v in self.checks if v.status == status]

    @property
    def regressions(self) -> list[CheckVerdict]:
        return self._with("regression")

    @property
    def improvements(self) -> list[CheckVerdict]:
        return self._with("improvement")

    @property
    def new(self) -> list[CheckVerdict]:
        return self._with("new")

    @property
    def removed(self) -> list[CheckVerdict]:
        return self._with("removed")

    @property
    def incomparable(self) -> list[CheckVerdict]:
        return self._with("incomparable")

    @property
    def changed_assertions(self) -> list[CheckVerdict]:
        """Paired checks whose comparison flipped or whose threshold loosened since the baseline."""
        return [v for v in self.checks if v.assertion is not None]

    @property
    def suite_regressions(self) -> list[SuiteVerdict]:
        return [s for s in self.suites if s.status == "regression"]

    @property
    def suite_improvements(self) -> list[SuiteVerdict]:
        return [s for s in self.suites if s.status == "improvement"]

    @property
    def failed(self) -> bool:
        return bool(
            self.regressions
            or self.suite_regressions
            or self.changed_assertions
            or (self.new_checks == "fail" and self.new)
        )

    @property
    def status(self) -> str:
        return "regression" if self.failed else "passed"

    def counts(self) -> dict[str, int]:
        counts = Counter(v.status for v in self.checks)
        return {
            "checks": len(self.checks),
            "compared": sum(counts[s] for s in ("regression", "improvement", "unchanged")),
            "regressions": counts["regression"],
            "improvements": counts["improvement"],
            "unchanged": counts["unchanged"],
            "new": counts["new"],
            "removed": counts["removed"],
            "incomparable": counts["incomparable"],
            "suite_regressions": len(self.suite_regressions),
            "suite_improvements": len(self.suite_improvements),
            "changed_assertions": len(self.changed_assertions),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored as ``results["baseline"]`` and printed by ``nlgeval compare --format json``)."""
        return {
            "status": self.status,
            "baseline": self.baseline_source,
            "head": self.head_source,
            "new_checks": self.new_checks,
            "counts": self.counts(),
            "statistics": {
                "method": "paired bootstrap over cases, percentile interval",
                "replicates": self.replicates,
                "seed": self.seed,
                "confidence": self.confidence,
                "min_cases": MIN_SUITE_CASES,
            },
            "tolerances": self.tolerances.to_dict(),
            "evaluator_change": None if self.evaluator_change is None else self.evaluator_change.to_dict(),
            "checks": [v.to_dict() for v in self.checks],
            "suites": [s.to_dict() for s in self.suites],
        }


def describe_fingerprint_difference(old: dict | None, new: dict | None) -> list[str]:
    """Lines saying how two evaluator fingerprints differ, e.g. ``["precision: fp32 -> int8"]``."""
    if not old or not new:
        missing = "baseline" if not old else "this run"
        return [f"fingerprint details missing in {missing}"]
    lines = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        if name == "files" and isinstance(a, dict) and isinstance(b, dict):
            for fname in sorted(set(a) | set(b)):
                fa, fb = a.get(fname), b.get(fname)
                if fa == fb:
                    continue
                if fa is None:
                    lines.append(f"file {fname}: only in this run")
                elif fb is None:
                    lines.append(f"file {fname}: only in the baseline")
                else:
                    lines.append(f"file {fname}: sha256 {str(fa)[:12]}… -> {str(fb)[:12]}…")
        else:
            lines.append(f"{name}: {a} -> {b}")
    return lines


# How a model was named (a local path differs between a laptop and CI) is not part of what makes scores
# comparable; the files' sha256, provider, precision and runtime version are.
_NAMING_ONLY = ("model",)


def same_evaluator(old_id: str | None, new_id: str | None, base: Baseline, head: Baseline) -> bool:
    """Whether two fingerprint ids denote the same evaluator.

    Equal ids are the same; different ids are still the same evaluator when both fingerprints are recorded,
    list the model files with their sha256, and differ only in how the model was referenced (``model``).
    """
    if old_id == new_id:
        return True
    if old_id is None or new_id is None:
        return False
    a, b = base.evaluators.get(old_id), head.evaluators.get(new_id)
    if not a or not b or not a.get("files") or not b.get("files"):
        return False
    strip = lambda fp: {k: v for k, v in fp.items() if k not in _NAMING_ONLY}  # noqa: E731
    return strip(a) == strip(b)


def compare(
    base: Baseline,
    head: Baseline,
    *,
    tolerances: Tolerances | None = None,
    allow_evaluator_change: bool = False,
    new_checks: str = "notice",
    seed: int = 0,
    replicates: int = 2000,
    confidence: float = 0.95,
) -> Comparison:
    """Compare ``head`` (this run) with ``base`` (the baseline); see the module docstring for the rules."""
    if new_checks not in NEW_CHECK_POLICIES:
        raise BaselineError(f"new_checks must be one of {', '.join(NEW_CHECK_POLICIES)}, got {new_checks!r}")
    tolerances = tolerances or Tolerances()
    common = sorted(set(base.entries) & set(head.entries))
    _check_keys_line_up(base, head, common)

    changed = [
        (base.entries[k], head.entries[k])
        for k in common
        if not same_evaluator(base.entries[k].evaluator, head.entries[k].evaluator, base, head)
    ]
    pair_counts = Counter((o.evaluator, n.evaluator) for o, n in changed)
    pairs = tuple(
        (old_id, new_id, _pair_differences(old_id, new_id, base, head), count)
        for (old_id, new_id), count in pair_counts.most_common()
    )
    if pairs and not allow_evaluator_change:
        old_id, new_id, differences, count = pairs[0]
        raise EvaluatorMismatchError(str(old_id), str(new_id), list(differences), len(changed))

    # Drift per (group, direction): mean |new - old| over evaluator-changed cases whose inputs are unchanged.
    drift_cases: dict[tuple, list[float]] = defaultdict(list)
    changed_groups: set[tuple] = set()
    for old, new in changed:
        gkey = _group_key(new)
        changed_groups.add(gkey)
        if (
            old.inputs_sha256 is not None
            and old.inputs_sha256 == new.inputs_sha256
            and old.score is not None
            and new.score is not None
        ):
            drift_cases[gkey].append(abs(new.score - old.score))
    drift = {g: sum(v) / len(v) for g, v in drift_cases.items()}
    unmeasured = sorted(changed_groups - set(drift))

    verdicts: list[CheckVerdict] = []
    for key in common:
        old, new = base.entries[key], head.entries[key]
        gkey = _group_key(new)
        evaluator_changed = not same_evaluator(old.evaluator, new.evaluator, base, head)
        if evaluator_changed and gkey in unmeasured:
            verdicts.append(
                _verdict(
                    old,
                    new,
                    "incomparable",
                    None,
                    reason=(
                        "evaluator changed and no case of this dimension kept its inputs, "
                        "so the drift cannot be measured"
                    ),
                )
            )
            continue
        widen = drift.get(gkey, 0.0) if evaluator_changed else 0.0
        tol = tolerances.for_check(new.kind, new.task, new.name, new.tolerance) + widen
        assertion = changed_assertion(old, new)
        if old.score is None:
            verdicts.append(_verdict(old, new, "incomparable", tol, widen, "baseline score was not finite", assertion))
        elif new.score is None:
            verdicts.append(_verdict(old, new, "regression", tol, widen, "score is not finite", assertion))
        else:
            # the baseline's direction: a flipped comparison cannot make a falling score an improvement
            gain = (new.score - old.score) * (1 if old.higher_is_better else -1)
            status = "regression" if gain < -tol - _EPS else "improvement" if gain > tol + _EPS else "unchanged"
            verdicts.append(_verdict(old, new, status, tol, widen, None, assertion))
    for key in sorted(set(head.entries) - set(base.entries)):
        verdicts.append(_verdict(None, head.entries[key], "new", None))
    for key in sorted(set(base.entries) - set(head.entries)):
        verdicts.append(_verdict(base.entries[key], None, "removed", None))
    verdicts.sort(key=lambda v: v.key)

    suites = _suites(verdicts, tolerances, drift, seed, replicates, confidence)
    change = None
    if pairs:
        change = EvaluatorChange(
            pairs,
            {group_label(*g[:3]): (d, len(drift_cases[g])) for g, d in drift.items()},
            tuple(group_label(*g[:3]) for g in unmeasured),
        )
    return Comparison(
        verdicts, suites, new_checks, change, seed, replicates, confidence, tolerances, base.source, head.source
    )


def _check_keys_line_up(base: Baseline, head: Baseline, common: list[str]) -> None:
    """Refuse a comparison whose keys do not line up (see the module docstring)."""
    if not base.entries:
        return  # an empty baseline: every check is new, which new_checks decides about
    new = sorted(set(head.entries) - set(base.entries))
    removed = sorted(set(base.entries) - set(head.entries))
    if common and not (len(new) * 2 > len(head.entries) and len(removed) >= len(new)):
        return
    raise KeyMismatchError(
        base.source,
        len(head.entries),
        len(base.entries),
        len(common),
        len(new),
        len(removed),
        new[0] if new else None,
        removed[0] if removed else None,
        _key_hint(new, removed),
    )


def _key_hint(new: list[str], removed: list[str]) -> str | None:
    """What the moved keys have in common: a folder added to or dropped from the front of every node id."""
    if not new or not removed:
        return None
    removed_set = set(removed)
    for longer, shorter, verb in ((new, removed_set, "have"), (removed, set(new), "lack")):
        prefixes: Counter[str] = Counter()
        for key in longer:
            parts = key.split("::", 1)[0].split("/")
            for cut in range(1, len(parts)):
                if "/".join(parts[cut:]) + key[len(key.split("::", 1)[0]) :] in shorter:
                    prefixes["/".join(parts[:cut]) + "/"] += 1
                    break
        if prefixes:
            prefix, count = prefixes.most_common(1)[0]
            if count * 2 >= len(longer):
                return (
                    f"{count} keys of this run {verb} the prefix {prefix!r} that the baseline's "
                    f"{'lack' if verb == 'have' else 'have'}: pytest chose another rootdir than when the "
                    "baseline was recorded"
                )
    return None


def _pair_differences(old_id: str | None, new_id: str | None, base: Baseline, head: Baseline) -> tuple[str, ...]:
    if old_id is None or new_id is None:  # one side used no evaluator at all
        return (f"evaluator: {old_id or 'none'} -> {new_id or 'none'}",)
    return tuple(describe_fingerprint_difference(base.evaluators.get(old_id), head.evaluators.get(new_id)))


def changed_assertion(old: BaselineEntry, new: BaselineEntry) -> str | None:
    """How ``new``'s assertion is weaker than, or opposite to, the baseline's ``old``: its direction flipped
    (``> 0.7`` to ``< 1.0``), its threshold loosened (lowered under ``>``/``>=``, raised under ``<``/``<=``), or
    a strict comparison made inclusive at the same threshold. None when it is the same or stricter."""
    was = f"{old.operator} {_threshold(old.threshold)}"
    now = f"{new.operator} {_threshold(new.threshold)}"
    if old.higher_is_better != new.higher_is_better:
        return f"the comparison flipped: {was} in the baseline, {now} in this run"
    if old.threshold is None or new.threshold is None:
        return None
    sign = 1 if old.higher_is_better else -1
    looser = (new.threshold - old.threshold) * sign < 0
    inclusive = new.threshold == old.threshold and len(old.operator) == 1 and len(new.operator) == 2
    if looser or inclusive:
        what = "lowered" if looser and sign > 0 else "raised" if looser else "made inclusive"
        return f"the threshold was {what}: {was} in the baseline, {now} in this run"
    return None


def _threshold(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


def _group_key(entry: BaselineEntry) -> tuple:
    return (entry.kind, entry.task, entry.name, entry.higher_is_better)


def _verdict(
    old: BaselineEntry | None,
    new: BaselineEntry | None,
    status: str,
    tolerance: float | None,
    drift: float = 0.0,
    reason: str | None = None,
    assertion: str | None = None,
) -> CheckVerdict:
    ref = new if new is not None else old
    if ref is None:
        raise ValueError("a verdict needs the baseline entry, the new one, or both")
    # a paired check is judged, and grouped into its suite, in the direction its baseline entry records
    direction = old if old is not None else ref
    return CheckVerdict(
        key=ref.key,
        nodeid=ref.nodeid,
        kind=ref.kind,
        task=ref.task,
        name=ref.name,
        status=status,
        old=None if old is None else old.score,
        new=None if new is None else new.score,
        tolerance=tolerance,
        higher_is_better=direction.higher_is_better,
        drift=drift,
        reason=reason,
        assertion=assertion,
    )


def _suites(verdicts, tolerances, drift, seed, replicates, confidence) -> list[SuiteVerdict]:
    groups: dict[tuple, list[CheckVerdict]] = defaultdict(list)
    for v in verdicts:
        if v.status in ("regression", "improvement", "unchanged") and v.old is not None and v.new is not None:
            groups[(v.kind, v.task, v.name, v.higher_is_better)].append(v)
    suites = []
    for gkey in sorted(groups, key=lambda g: (g[0], g[1] or "", g[2], not g[3])):
        cases = groups[gkey]
        kind, task, name, higher = gkey
        widen = drift.get(gkey, 0.0)
        tol = tolerances.for_suite(kind, task, name) + widen
        old = [float(v.old) for v in cases if v.old is not None]  # every case has both: see the grouping
        new = [float(v.new) for v in cases if v.new is not None]
        old_mean, new_mean = sum(old) / len(old), sum(new) / len(new)
        if len(cases) < MIN_SUITE_CASES:
            suites.append(
                SuiteVerdict(kind, task, name, "too few cases", len(cases), old_mean, new_mean, tol, higher, widen)
            )
            continue
        boot = paired_bootstrap(old, new, replicates=replicates, seed=seed, confidence=confidence)
        if higher:
            bad = boot.high < 0 and boot.statistic < -tol - _EPS
            good = boot.low > 0 and boot.statistic > tol + _EPS
        else:
            bad = boot.low > 0 and boot.statistic > tol + _EPS
            good = boot.high < 0 and boot.statistic < -tol - _EPS
        status = "regression" if bad else "improvement" if good else "unchanged"
        suites.append(SuiteVerdict(kind, task, name, status, len(cases), old_mean, new_mean, tol, higher, widen, boot))
    return suites
