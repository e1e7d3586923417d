"""Reports of a pytest-nlgeval session: one self-contained HTML page and Markdown summaries for CI.

>>> from pytest_nlgeval.report import load_results, render_html, step_summary
>>> results = load_results("results.json")          # doctest: +SKIP
>>> open("report.html", "w").write(render_html(results))  # doctest: +SKIP
>>> print(step_summary(results, artifact_url=None))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib

_LAZY = {
    "render_html": "html",
    "write_html": "html",
    "COMMENT_LIMIT": "markdown",
    "STEP_SUMMARY_LIMIT": "markdown",
    "comment_marker": "markdown",
    "pr_comment": "markdown",
    "step_summary": "markdown",
    "ReportInputError": "results",
    "load_results": "results",
    "validate_results": "results",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    # Lazy, so that loading the report's pytest plugin costs nothing in a session without a report.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_nlgeval.report' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pytest_nlgeval.report.{module}"), name)
