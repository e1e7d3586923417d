"""Markdown summaries of a results dict: the job's step summary and the sticky pull-request comment.

GitHub limits a step summary to 1 MiB and a comment body to 65,536 characters. Both builders first shorten
their tables (fewer rows, with a line saying how many were left out and where to see them) and only as a
last resort cut the text; the result is always within the limit, counted in UTF-8 bytes (never fewer than
characters). Everything that came from the tests is escaped: a node id or check name cannot break a table,
inject HTML or mention a user.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from pytest_nlgeval.report.view import ReportView, build_view

__all__ = ["COMMENT_LIMIT", "STEP_SUMMARY_LIMIT", "comment_marker", "md_escape", "pr_comment", "step_summary"]

STEP_SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's limit for one step's $GITHUB_STEP_SUMMARY
COMMENT_LIMIT = 65536  # GitHub's limit for a comment body (characters; counted here in bytes, the stricter)
_MARKER_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_ICONS = {"passed": "✅", "failed": "❌", "regressed": "⚠️", "empty": "➖"}
_TRUNCATED = "\n\n*(summary cut to fit GitHub's size limit; the HTML report has everything)*\n"


def md_escape(text: Any) -> str:
    """Make arbitrary text safe inside a Markdown table cell: one line, no HTML, no mentions, no emphasis."""
    text = str(text).replace("\r", " ").replace("\n", " ")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = re.sub(r"([\\*_\[\]~])", r"\\\1", text)
    # Entities last: their own '#' and ';' must not be escaped again.
    return text.replace("|", "&#124;").replace("`", "&#96;").replace("@", "&#64;")


def comment_marker(marker_id: str = "default") -> str:
    """The hidden HTML comment that identifies the sticky comment (one per ``marker_id``, e.g. per job).

    >>> comment_marker("ubuntu-py311")
    '<!-- pytest-nlgeval-report:ubuntu-py311 -->'
    """
    if not _MARKER_ID.match(marker_id):
        raise ValueError(f"marker id {marker_id!r} must be 1-64 letters, digits, '.', '_' or '-'")
    return f"<!-- pytest-nlgeval-report:{marker_id} -->"


def _num(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


def _more(total: int, shown: int, what: str) -> list[str]:
    if total <= shown:
        return []
    if shown == 0:
        return [f"*{total} {what} (see the HTML report)*"]
    return ["", f"*… and {total - shown} more {what} (see the HTML report)*"]


def _table(header: list[str], rows: list[str], total: int, max_rows: int, what: str) -> list[str]:
    """A table of at most ``max_rows`` rows; with no room for rows, only the line saying how many there are."""
    shown = rows[:max_rows]
    return (header + shown if shown else []) + _more(total, len(shown), what) + [""]


def _render(view: ReportView, *, artifact_url: str | None, max_rows: int, heading: str) -> str:
    icon = _ICONS[view.verdict]
    lines = [f"{heading} {icon} pytest-nlgeval: {md_escape(view.headline)}", ""]
    lines += [
        "| checks | passed | failed | xfailed | xpassed | regressions | tests |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {view.checks} | {view.passed} | {view.failed} | {view.xfailed} | {view.xpassed} | "
        f"{view.regressions if view.baseline is not None else 'no baseline'} | {view.tests} |",
        "",
    ]
    if view.pytest_line:
        lines += [f"pytest: {md_escape(view.pytest_line)}", ""]
    baseline = view.baseline
    if baseline is not None:
        if baseline.error:
            lines += [
                f"> **No baseline comparison** ({md_escape(baseline.status or 'error')}): {md_escape(baseline.error)}",
                "",
            ]
        dims = baseline.dimension_regressions
        if dims:
            rows = []
            for d in dims[:max_rows]:
                interval = (
                    f"[{d.ci_low:+.4f}, {d.ci_high:+.4f}]" if d.ci_low is not None and d.ci_high is not None else "n/a"
                )
                rows.append(
                    f"| {md_escape(d.label)} | {d.n if d.n is not None else ''} | {_num(d.old_mean)} → "
                    f"{_num(d.new_mean)} | {_signed(d.delta)} | {interval} |"
                )
            lines += _table(
                [
                    "**Dimensions whose mean dropped** (paired bootstrap, 95% interval)",
                    "",
                    "| dimension | cases | baseline → now | change | 95% interval |",
                    "|---|---:|---|---:|---|",
                ],
                rows,
                len(dims),
                max_rows,
                "dimensions whose mean dropped",
            )
        regressions = baseline.regressions
        if regressions:
            rows = []
            for c in regressions[:max_rows]:
                tolerance = "" if c.tolerance is None else f"{c.tolerance:g}"
                rows.append(
                    f"| {md_escape(c.key)} | {_num(c.old)} → {_num(c.new)} | {_signed(c.delta)} | {tolerance} |"
                )
            lines += _table(
                [
                    "**Regressed checks** (baseline → now)",
                    "",
                    "| check | baseline → now | change | tolerance |",
                    "|---|---|---:|---:|",
                ],
                rows,
                len(regressions),
                max_rows,
                "regressions",
            )
        for note in baseline.notes[:max_rows]:
            lines += [f"> {md_escape(note)}", ""]
    failures = view.failures
    if failures:
        rows = []
        for row in failures[:max_rows]:
            threshold = row.threshold_text
            if row.outcome == "xpassed-strict":  # passed its threshold; the strict xfail test failed by passing
                threshold += " (XPASS(strict))"
            rows.append(
                f"| {md_escape(row.check['nodeid'])} | {md_escape(row.label)} | {_num(row.score)} | "
                f"{md_escape(threshold)} |"
            )
        lines += _table(
            ["**Worst failures**", "", "| test | check | score | threshold |", "|---|---|---:|---|"],
            rows,
            len(failures),
            max_rows,
            "failures",
        )
    footer = []
    if artifact_url:
        footer.append(f"[Full HTML report]({_safe_url(artifact_url)})")
    evaluators = view.evaluators
    for ident, fingerprint in sorted(evaluators.items())[:3]:
        if isinstance(fingerprint, Mapping):
            what = ", ".join(
                md_escape(fingerprint[k]) for k in ("model", "provider", "precision") if fingerprint.get(k)
            )
            footer.append(f"evaluator {md_escape(ident)} ({what})")
    if footer:
        lines.append(" · ".join(footer))
    return "\n".join(lines).rstrip() + "\n"


def _safe_url(url: str) -> str:
    if not re.match(r"^https://[^\s()<>\[\]\"'`]+$", url):
        raise ValueError(f"artifact URL {url!r} must be an https URL without spaces, quotes, brackets or parentheses")
    return url


def _fit(build, limit: int, prefix: str = "") -> str:
    """Render with as many table rows as fit in ``limit`` UTF-8 bytes; cut the text only as a last resort."""
    budget = limit - len(prefix.encode("utf-8"))
    if budget <= len(_TRUNCATED.encode("utf-8")):
        raise ValueError(f"limit {limit} is too small for a summary")
    rows = 50
    while True:
        text = build(rows)
        if len(text.encode("utf-8")) <= budget:
            return prefix + text
        if rows == 0:
            break
        rows //= 2
    cut = text.encode("utf-8")[: budget - len(_TRUNCATED.encode("utf-8"))].decode("utf-8", errors="ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut  # never end inside a table row
    return prefix + cut + _TRUNCATED


def step_summary(
    results: Mapping[str, Any], *, artifact_url: str | None = None, limit: int = STEP_SUMMARY_LIMIT
) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: totals, regressions with old -> new, worst failures, link.

    >>> text = step_summary(  # doctest: +SKIP
    ...     load_results("results.json"), artifact_url="https://github.com/o/r/actions/runs/1/artifacts/2"
    ... )
    """
    view = build_view(results)
    return _fit(lambda rows: _render(view, artifact_url=artifact_url, max_rows=rows, heading="##"), limit)


def pr_comment(
    results: Mapping[str, Any],
    *,
    artifact_url: str | None = None,
    marker_id: str = "default",
    limit: int = COMMENT_LIMIT,
) -> str:
    """The sticky pull-request comment: the hidden marker on the first line, then the summary.

    The marker lets the Action find and update its own comment instead of adding one per push.
    """
    view = build_view(results)
    prefix = comment_marker(marker_id) + "\n"
    return _fit(
        lambda rows: _render(view, artifact_url=artifact_url, max_rows=min(rows, 10), heading="###"), limit, prefix
    )
