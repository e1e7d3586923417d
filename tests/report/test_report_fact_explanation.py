"""A failed fact check carries its whole explanation into the report: the weakest claim, the span the source
does not support and what it says instead, and the deciding source window, as the terminal prints them."""

from __future__ import annotations

import json

import pytest

# In-process pytester runs unload the modules they imported, and C extensions cannot be loaded twice in one
# process: load them once, before any pytester snapshot.
import nlgeval_runtime.boolqa  # noqa: F401,E402
import onnxruntime  # noqa: F401,E402

from fact_case import MUST_SAY, OUTPUT, SOURCE, report_explanations
from pytest_nlgeval.core.score import explanation_lines

SUITE = f'''
import pytest
from pytest_nlgeval import check_dimension

SOURCE = {SOURCE!r}
OUTPUT = {OUTPUT!r}

def test_summary_is_faithful():
    check_dimension(OUTPUT, "consistency", source=SOURCE)

@pytest.mark.xfail(strict=True, reason="a wrong figure must fail")
def test_wrong_figure_is_caught():
    check_dimension(OUTPUT, "consistency", source=SOURCE)
'''


@pytest.fixture(autouse=True)
def _own_rootdir(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")


def test_the_report_says_what_the_terminal_says(pytester):
    pytester.makepyfile(test_fact=SUITE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--nlgeval-no-cache", "--nlgeval-json", "r.json", "--nlgeval-report", "r.html"
    )
    result.assert_outcomes(failed=1, xfailed=1)
    terminal = result.stdout.str()
    for phrase in MUST_SAY:
        assert phrase in terminal

    data = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert [c["outcome"] for c in data["checks"]] == ["failed", "xfailed"]
    # the results file holds what the explanation is made of: read back, it gives the same lines
    expected = explanation_lines(data["checks"][0]["details"], per_unit=False)
    assert all(any(phrase in line for line in expected) for phrase in MUST_SAY), expected

    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    shown = report_explanations(page)
    assert shown == [expected, expected]  # the failure and the expected failure, each under its test
    for line in expected:
        assert line in terminal, f"the report says {line!r}, the terminal does not"


def test_a_passed_check_keeps_its_explanation_behind_the_details():
    from pytest_nlgeval.report.html import render_html

    details = {
        "unit": "claim",
        "aggregation": "mean_min",
        "units": [{"text": "The bridge opens in May.", "score": 0.9}, {"text": "It cost 38 million.", "score": 0.8}],
    }
    check = {
        "key": "t.py::test_ok::consistency::0",
        "nodeid": "t.py::test_ok",
        "kind": "dimension",
        "name": "consistency",
        "task": "summarization",
        "index": 0,
        "score": 0.825,
        "operator": ">",
        "threshold": 0.45,
        "passed": True,
        "details": details,
    }
    page = render_html({"schema": "pytest-nlgeval/results", "version": 1, "checks": [check]})
    row = page.split('data-key="t.py::test_ok::consistency::0"', 1)[1]
    before_details, inside = row.split('<details class="check">', 1)
    assert '<ul class="explanation">' not in before_details.split("</td>", 1)[0]
    assert "<li>weakest claim (0.8000): &#39;It cost 38 million.&#39;</li>" in inside
