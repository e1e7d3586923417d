"""The report's pytest plugin (entry point ``pytest11: nlgeval_report``).

Adds ``--nlgeval-report PATH`` (ini key ``nlgeval_report``): at the end of the session, on the controller,
the results are rendered as one self-contained HTML page. The page is written from the
``pytest_nlgeval_results_ready`` hook with ``trylast=True``, so the other implementations of that hook (the
baseline comparison adds ``results["baseline"]``) have run first and their additions are in the report.
Extra sections come from ``pytest_nlgeval_report_sections`` implementations in plugins and ``conftest.py``.
A relative PATH is taken from the directory pytest was started in, like ``--nlgeval-json``.

    pytest --nlgeval-report report.html
"""

from __future__ import annotations

import os

import pytest

_report_path_key = pytest.StashKey[str]()
_report_error_key = pytest.StashKey[str]()
_HELP = "write an HTML report of the quality checks (self-contained, opens from file://) to this path"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("nlgeval", "quality tests of generated text (pytest-nlgeval)")
    group.addoption("--nlgeval-report", action="store", default=None, dest="nlgeval_report", metavar="PATH", help=_HELP)
    parser.addini("nlgeval_report", help=_HELP, type="string", default=None)


def _report_option(config) -> str | None:
    value = config.getoption("nlgeval_report", None)
    if not value:
        value = config.getini("nlgeval_report")
    return value or None


@pytest.hookimpl(trylast=True, optionalhook=True)
def pytest_nlgeval_results_ready(config, results) -> None:
    path = _report_option(config)
    if not path:
        return
    from pytest_nlgeval.report.html import write_html
    from pytest_nlgeval.report.sections import collect_sections

    target = os.path.join(str(config.invocation_params.dir), path)
    try:
        sections = collect_sections(results, hook=config.hook.pytest_nlgeval_report_sections)
        write_html(results, target, sections=sections)
    except Exception as exc:  # a broken section or an unwritable path must not hide the test results
        config.stash[_report_error_key] = f"{target}: {type(exc).__name__}: {exc}"
        return
    config.stash[_report_path_key] = target


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    path = config.stash.get(_report_path_key, None)
    if path:
        terminalreporter.write_line(f"nlgeval: HTML report written to {path}")
    error = config.stash.get(_report_error_key, None)
    if error:
        terminalreporter.write_line(f"nlgeval: HTML report NOT written: {error}", red=True, bold=True)
