"""The HTML report's trajectory section: each checked continuation plotted against the human band.

Registered as a pytest plugin (entry point ``pytest11``: ``nlgeval-trajectory``) so that pytest's
``--nlgeval-report`` and ``nlgeval report`` both collect it through the ``pytest_nlgeval_report_sections``
hook. It replaces the report's generic trajectory section with one figure per checked continuation
(diversity and coherence, machine vs the human median and 5th-95th percentile band, the token where
diversity leaves the band) and the table of that continuation's checks. Module import is stdlib only:
a session without trajectory checks pays nothing.
"""

from __future__ import annotations

import pytest

from typing import Any, Mapping

SECTION_ID = "nlgeval-trajectory-plots"
REPLACES = "nlgeval-trajectories"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _series(value: Any) -> list:
    """A list of numbers (None for gaps) or [], whatever a third party stored in the details."""
    if not isinstance(value, list):
        return []
    ok = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in value)
    return value if ok else []


def _check_bound(group: list, details: Mapping[str, Any], low: list) -> tuple[list, list]:
    """``(dotted floor, bound to mark the leave point on)`` for the group's ``assert_not_degenerate``.

    The default envelope is drawn and marked (also when the check was not called: it is what the check
    would use); ``percentile=5`` marks the band's lower edge; any other stored level has no curve in the
    details, so nothing is marked rather than a bound the check did not use.
    """
    envelope = _mapping(details.get("envelope"))
    margin = next((_mapping(c.get("details")) for c in group if c.get("name") == "diversity_band_margin"), None)
    if margin is None or (margin.get("coverage") is not None and margin.get("coverage") == envelope.get("coverage")):
        floor = _series(envelope.get("diversity"))
        return floor, floor or low
    low_level = _mapping(details.get("band_percentiles")).get("low")
    if margin.get("coverage") is None and margin.get("percentile") == low_level:
        return [], low
    return [], []


def _leave(machine: list, low: list) -> int | None:
    for t, (m, b) in enumerate(zip(machine, low)):
        if m is not None and b is not None and m < b:
            return t + 1
    return None


def render_trajectory_section(checks: list[Mapping[str, Any]]):
    """HTML (``markupsafe.Markup``) for the trajectory checks of a results file."""
    from markupsafe import Markup, escape

    from pytest_nlgeval.core.checks import FAILING_OUTCOMES, outcome_of
    from pytest_nlgeval.trajectory.plot import trajectory_svg

    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for check in checks:
        output = str(_mapping(_mapping(check.get("details")).get("inputs")).get("output", ""))
        groups.setdefault((str(check.get("nodeid", "")), output), []).append(check)
    parts = [
        '<p class="muted">Machine trajectory (red) against the human reference band (blue: median dashed, '
        '5th-95th percentile shaded) of the bank, per prefix length; dotted: the envelope that 95% of the '
        "bank's human continuations stay above (the bound of assert_not_degenerate).</p>"
    ]
    for (nodeid, output), group in groups.items():
        details = _mapping(group[0].get("details"))
        traj = _mapping(details.get("trajectory"))
        band = _mapping(details.get("band"))
        outcomes = {outcome_of(c) for c in group}
        failed = bool(outcomes & FAILING_OUTCOMES)
        expected = "xfailed" in outcomes  # failed inside a test pytest reports xfailed
        status = "fail" if failed else "xfailed" if expected else "pass"
        parts.append(f'<div class="card {status}"><h3>{escape(nodeid)}</h3>')
        prompt = str(_mapping(details.get("inputs")).get("prompt", ""))
        parts.append(
            f'<p class="muted">prompt: {escape(prompt[:160])}{"…" if len(prompt) > 160 else ""}<br>'
            f'continuation: {escape(output[:240])}{"…" if len(output) > 240 else ""}</p>'
        )
        for signal in ("diversity", "coherence"):
            machine = _series(traj.get(signal))
            b = _mapping(band.get(signal))
            low, median, high = _series(b.get("low")), _series(b.get("median")), _series(b.get("high"))
            if not machine:
                continue
            floor, bound = _check_bound(group, details, low) if signal == "diversity" else ([], [])
            leave = _leave(machine, bound) if bound else None
            parts.append(
                str(
                    trajectory_svg(
                        machine, low=low, median=median, high=high, title=signal, leave_at=leave, floor=floor
                    )
                )
            )
        parts.append(
            '<table class="inner"><thead><tr><th>check</th><th>score</th><th>threshold</th>'
            '<th>result</th></tr></thead><tbody>'
        )
        from pytest_nlgeval.util.numbers import format_threshold

        for c in group:
            score = c.get("score")
            shown = f"{score:.4f}" if isinstance(score, (int, float)) else "n/a"
            result = outcome_of(c)
            parts.append(
                f'<tr><td>{escape(c.get("name", ""))}</td><td>{escape(shown)}</td>'
                f'<td>{escape(str(c.get("operator", "")))} {escape(format_threshold(c.get("threshold")))}</td>'
                f"<td>{result}</td></tr>"
            )
        parts.append("</tbody></table></div>")
    return Markup("".join(parts))


@pytest.hookimpl(optionalhook=True)  # the hook exists only while the core plugin is active
def pytest_nlgeval_report_sections(results):
    """Hook implementation: one section with a figure per checked continuation (none without such checks)."""
    checks = [c for c in (results or {}).get("checks", []) if c.get("kind") == "trajectory"]
    if not checks:
        return []
    return [
        {"id": SECTION_ID, "title": "Trajectories", "html": render_trajectory_section(checks), "replaces": REPLACES}
    ]
