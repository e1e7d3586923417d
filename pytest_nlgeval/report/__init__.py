"""Reports of a pytest-nlgeval session: one self-contained HTML page and Markdown summaries for CI.

>>> from pytest_nlgeval.report import load_results, render_html, step_summary
>>> results = load_results("results.json")          # doctest: +SKIP
>>> open("report.html", "w").write(render_html(results))  # doctest: +SKIP
>>> print(step_summary(results, artifact_url=None))  # doctest: +SKIP
"""
from __future__ import annotations

from pytest_nlgeval.report.html import render_html, write_html
from pytest_nlgeval.report.markdown import COMMENT_LIMIT, STEP_SUMMARY_LIMIT, comment_marker, pr_comment, step_summary
from pytest_nlgeval.report.results import ReportInputError, load_results, validate_results

__all__ = ["COMMENT_LIMIT", "STEP_SUMMARY_LIMIT", "ReportInputError", "comment_marker", "load_results",
           "pr_comment", "render_html", "step_summary", "validate_results", "write_html"]
