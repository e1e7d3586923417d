"""Verdicts as text: terminal lines (regressions first, old -> new) and Markdown for CI job summaries.

Example::

    for line, markup in render_text(comparison):
        print(line)
    open(os.environ["GITHUB_STEP_SUMMARY"], "a").write(render_markdown(comparison))
"""

from __future__ import annotations

from pytest_nlgeval.baseline.compare import MIN_SUITE_CASES, CheckVerdict, Comparison, SuiteVerdict

__all__ = ["headline", "render_markdown", "render_text"]

_LIST_LIMIT = 10  # new/removed/improved checks shown before "... and N more"; regressions are always all shown


def headline(comparison: Comparison) -> str:
    """One line: the outcome and the counts, e.g. ``2 regressions (1 check, 1 suite); 37 unchanged``."""
    c = comparison.counts()
    if comparison.failed:
        parts = []
        if c["regressions"] or c["suite_regressions"]:
            parts.append(
                f"{c['regressions'] + c['suite_regressions']} regression"
                f"{'s' if c['regressions'] + c['suite_regressions'] != 1 else ''} "
                f"({_n(c['regressions'], 'check')}, {_n(c['suite_regressions'], 'suite')})"
            )
        if c["changed_assertions"]:
            parts.append(f"{_n(c['changed_assertions'], 'changed assertion')} (flipped or loosened)")
        if comparison.new_checks == "fail" and c["new"]:
            parts.append(f"{_n(c['new'], 'new check')} without a baseline entry")
        head = "FAILED: " + "; ".join(parts)
    else:
        head = "passed: no regression"
    tail = [
        f"{c['compared']} compared",
        f"{c['unchanged']} unchanged",
        f"{c['improvements'] + c['suite_improvements']} improved",
    ]
    if c["new"]:
        tail.append(f"{c['new']} new")
    if c["removed"]:
        tail.append(f"{c['removed']} removed")
    if c["incomparable"]:
        tail.append(f"{c['incomparable']} incomparable")
    return f"{head} ({', '.join(tail)})"


def render_text(comparison: Comparison) -> list[tuple[str, dict]]:
    """Terminal lines with pytest TerminalWriter markup (``{"red": True}``); regressions come first."""
    out: list[tuple[str, dict]] = []
    red, green, yellow = {"red": True, "bold": True}, {"green": True}, {"yellow": True}
    for s in comparison.suite_regressions:
        out.append(("REGRESSION   " + _suite_line(s), red))
    for v in comparison.regressions:
        out.append(("REGRESSION   " + _check_line(v), red))
    for v in comparison.changed_assertions:
        out.append(("ASSERTION    " + f"{v.key}: {v.assertion} (re-record with --nlgeval-baseline-update)", red))
    if comparison.new_checks == "fail":
        for v in comparison.new:
            out.append(("NEW (fails)  " + f"{v.key}: {_f(v.new)} has no baseline entry", red))
    for s in comparison.suite_improvements:
        out.append(("improved     " + _suite_line(s), green))
    out += _limited([("improved     " + _check_line(v), green) for v in comparison.improvements])
    for s in comparison.suites:
        if s.status in ("unchanged", "too few cases"):
            out.append(("suite        " + _suite_line(s), {}))
    if comparison.new_checks != "fail":
        out += _limited(
            [("new          " + f"{v.key}: {_f(v.new)} (no baseline entry; passes)", yellow) for v in comparison.new]
        )
    out += _limited(
        [("removed      " + f"{v.key}: was {_f(v.old)} (did not run; entry kept)", yellow) for v in comparison.removed]
    )
    out += _limited([("incomparable " + f"{v.key}: {v.reason}", yellow) for v in comparison.incomparable])
    change = comparison.evaluator_change
    if change is not None:
        for old_id, new_id, differences, count in change.pairs:
            out.append((f"evaluator changed ({count} checks): {old_id} -> {new_id}: {'; '.join(differences)}", yellow))
        for label, (drift, cases) in sorted(change.drift.items()):
            out.append(
                (
                    f"cross-evaluator drift {label}: {drift:.4f} (mean |difference| over {cases} cases with "
                    "unchanged inputs); tolerances widened by it",
                    yellow,
                )
            )
        for label in change.unmeasured:
            out.append((f"cross-evaluator drift {label}: not measurable (no case kept its inputs)", yellow))
    out.append(
        (
            f"{headline(comparison)}; suites: paired bootstrap, {comparison.replicates} replicates, "
            f"seed {comparison.seed}, {comparison.confidence:.0%} percentile interval",
            red if comparison.failed else green,
        )
    )
    return out


def render_markdown(comparison: Comparison) -> str:
    """A Markdown section for a CI job summary (``$GITHUB_STEP_SUMMARY``) or a pull-request comment."""
    lines = [f"### nlgeval baseline: {headline(comparison)}", ""]
    if comparison.baseline_source or comparison.head_source:
        lines += [f"Baseline `{comparison.baseline_source}`, compared with `{comparison.head_source}`.", ""]
    failing = [v for v in comparison.regressions]
    if comparison.new_checks == "fail":
        failing += comparison.new
    if comparison.suites:
        lines += [
            "| dimension | cases | old mean | new mean | change | 95% interval | tolerance | verdict |",
            "|---|---:|---:|---:|---:|---|---:|---|",
        ]
        order = {"regression": 0, "improvement": 1, "unchanged": 2, "too few cases": 3}
        for s in sorted(comparison.suites, key=lambda s: order[s.status]):
            interval = "" if s.bootstrap is None else f"[{s.bootstrap.low:+.4f}, {s.bootstrap.high:+.4f}]"
            change = "" if s.change is None else f"{s.change:+.4f}"
            verdict = f"**{s.status.upper()}**" if s.status == "regression" else s.status
            lines.append(
                f"| `{s.label}` | {s.n} | {_f(s.old_mean)} | {_f(s.new_mean)} | {change} | {interval} | "
                f"{s.tolerance:.4f} | {verdict} |"
            )
        lines.append("")
    rows = [(v, "**REGRESSION**" if v.status == "regression" else "**NEW (fails)**") for v in failing]
    rows += [(v, f"**ASSERTION CHANGED**: {_md(v.assertion or '')}") for v in comparison.changed_assertions]
    rows += [(v, "improved") for v in comparison.improvements]
    if rows:
        lines += ["| check | old | new | change | tolerance | verdict |", "|---|---:|---:|---:|---:|---|"]
        for v, verdict in rows:
            change = "" if v.change is None else f"{v.change:+.4f}"
            tol = "" if v.tolerance is None else f"{v.tolerance:.4f}"
            lines.append(f"| `{_md(v.key)}` | {_f(v.old)} | {_f(v.new)} | {change} | {tol} | {verdict} |")
        lines.append("")
    notes = []
    if comparison.new and comparison.new_checks != "fail":
        notes.append(
            f"{len(comparison.new)} new checks without a baseline entry (they pass): "
            + ", ".join(f"`{_md(v.key)}`" for v in comparison.new[:_LIST_LIMIT])
            + (" …" if len(comparison.new) > _LIST_LIMIT else "")
        )
    if comparison.removed:
        notes.append(
            f"{len(comparison.removed)} baseline checks did not run: "
            + ", ".join(f"`{_md(v.key)}`" for v in comparison.removed[:_LIST_LIMIT])
            + (" …" if len(comparison.removed) > _LIST_LIMIT else "")
        )
    if comparison.incomparable:
        notes.append(f"{len(comparison.incomparable)} checks incomparable: {comparison.incomparable[0].reason}")
    evaluator_change = comparison.evaluator_change
    if evaluator_change is not None:
        for old_id, new_id, differences, count in evaluator_change.pairs:
            notes.append(f"Evaluator changed for {count} checks (`{old_id}` -> `{new_id}`): {'; '.join(differences)}")
        for label, (drift, cases) in sorted(evaluator_change.drift.items()):
            notes.append(
                f"Cross-evaluator drift of `{label}`: {drift:.4f} (mean absolute difference over {cases} "
                "cases with unchanged inputs); its tolerances were widened by this amount"
            )
    notes.append(
        f"Suites: paired bootstrap over cases, {comparison.replicates} replicates, seed {comparison.seed}, "
        f"{comparison.confidence:.0%} percentile interval; a suite regresses when the whole interval is "
        "below zero and the mean drop exceeds the tolerance."
    )
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _check_line(v: CheckVerdict) -> str:
    extra = f", widened by drift {v.drift:.4f}" if v.drift else ""
    if v.new is None or v.old is None:
        return f"{v.key}: {_f(v.old)} -> {_f(v.new)} ({v.reason or 'not comparable'})"
    return f"{v.key}: {_f(v.old)} -> {_f(v.new)} ({v.change:+.4f}, tolerance {v.tolerance:.4f}{extra})"


def _suite_line(s: SuiteVerdict) -> str:
    what = f"{s.label} (suite, {s.n} cases): mean {_f(s.old_mean)} -> {_f(s.new_mean)}"
    if s.bootstrap is None:
        return f"{what}; too few cases for an interval (needs {MIN_SUITE_CASES})"
    direction = "" if s.higher_is_better else ", lower is better"
    return (
        f"{what}, change {s.change:+.4f}, 95% interval [{s.bootstrap.low:+.4f}, {s.bootstrap.high:+.4f}], "
        f"tolerance {s.tolerance:.4f}{direction}"
    )


def _limited(lines: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    if len(lines) <= _LIST_LIMIT:
        return lines
    return lines[:_LIST_LIMIT] + [(f"             ... and {len(lines) - _LIST_LIMIT} more", lines[0][1])]


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _md(text: str) -> str:
    return text.replace("`", "'").replace("|", "\\|")
