"""Render a results dict as one self-contained HTML page (Jinja2, autoescaped).

The page inlines its stylesheet and SVG charts, runs no script, and carries a Content-Security-Policy that
forbids scripts and network requests, so it opens the same from a CI artifact, a file:// URL or a mail
attachment, and text produced by the application under test can never execute in the reviewer's browser.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["render_html", "write_html", "LONG_TEXT_CHARS", "STATUS_TITLES"]

LONG_TEXT_CHARS = 600  # texts longer than this are collapsed behind a preview
_PREVIEW_CHARS = 240


@functools.lru_cache(maxsize=1)
def _environment():
    from jinja2 import Environment, PackageLoader, select_autoescape

    environment = Environment(
        loader=PackageLoader("pytest_nlgeval.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["css"] = _css
    return environment


def _css(text) -> str:
    from pytest_nlgeval.report.charts import _css as css

    return css(text)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-nlgeval")
    except Exception:  # running from a source tree that is not installed
        return "unknown"


def render_html(
    results: Mapping[str, Any], *, sections: Sequence[Any] | None = None, title: str = "pytest-nlgeval report"
) -> str:
    """Return the report page for ``results`` (the dict of docs/results-schema.md).

    ``sections`` are extra :class:`~pytest_nlgeval.report.sections.Section` objects (or mappings with ``id``,
    ``title`` and ``html``) from the ``pytest_nlgeval_report_sections`` hook; the built-in trajectory and
    metric sections are added unless a section ``replaces`` them.

    >>> html = render_html(load_results("results.json"))  # doctest: +SKIP
    >>> "<svg" in html  # doctest: +SKIP
    True
    """
    from pytest_nlgeval.report.charts import delta_chart, distribution_chart
    from pytest_nlgeval.report.sections import Section, builtin_sections, normalise_sections, render_details
    from pytest_nlgeval.report.view import build_view

    view = build_view(results)
    extra = [s for s in (sections or []) if isinstance(s, Section)]
    extra += normalise_sections([[s for s in (sections or []) if not isinstance(s, Section)]])
    replaced = {s.replaces for s in extra if s.replaces}
    builtin = [s for s in builtin_sections(view) if s.id not in replaced]
    taken = {s.id for s in builtin}
    for section in extra:
        if section.id in taken or section.id in _RESERVED_IDS:
            raise ValueError(f"report section id {section.id!r} is already used by the report; choose another id")
        taken.add(section.id)
    charts = {
        group.label: distribution_chart(
            group.scores,
            group.passed,
            group.thresholds,
            title=group.label,
            domain=group.domain,
            expected=group.expected,
        )
        for group in view.groups
    }
    delta_svg = ""
    # The chart shows the dimensions that have a bootstrap interval (enough paired cases); the table lists all.
    with_interval = [
        d
        for d in (view.baseline.dimensions if view.baseline is not None else [])
        if d.ci_low is not None and d.ci_high is not None
    ]
    if with_interval:
        delta_svg = delta_chart(
            [
                (
                    d.label,
                    d.delta,
                    d.ci_low,
                    d.ci_high,
                    None if d.tolerance is None else d.tolerance * (1 if d.higher_is_better else -1),
                    d.status,
                )
                for d in with_interval
            ]
        )
    template = _environment().get_template("report.html.j2")
    return template.render(
        view=view,
        sections=builtin + extra,
        charts=charts,
        delta_svg=delta_svg,
        render_details=render_details,
        title=title,
        version=_version(),
        created=results.get("created"),
        long_text=LONG_TEXT_CHARS,
        preview_chars=_PREVIEW_CHARS,
        status_titles=STATUS_TITLES,
    )


#: what a check's badge means where its status follows pytest's verdict on an xfail test
STATUS_TITLES = {
    "xfailed": "failed inside an xfail test: expected, not counted as a failure",
    "xpassed": "passed inside an xfail test that pytest reports XPASS: not counted as a failure",
    "xpassed-strict": "passed inside an xfail(strict=True) test: pytest reports the test [XPASS(strict)] failed, "
    "and so does this report",
}


_RESERVED_IDS = {
    "summary",
    "baseline",
    "distributions",
    "checks",
    "environment",
    "verdict",
    "evaluators",
    "checks-table",
    "baseline-dimensions",
    "baseline-regressions",
}


def write_html(results: Mapping[str, Any], path: str | os.PathLike, **kwargs: Any) -> Path:
    """Render and write the report atomically (a reader never sees half a page); returns the path."""
    html = render_html(results, **kwargs)
    from pytest_nlgeval.util.files import write_text_atomic

    target = Path(path)
    write_text_atomic(target, html)
    return target
