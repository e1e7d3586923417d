"""Expected failures are counted as pytest counts them: a suite of strict xfails (caught and missed), a
non-strict xpass, an imperative xfail, an xfail that raised the wrong error and plain failures gives the same
numbers in pytest's summary line, the terminal table, the results file, ``nlgeval summary`` and the HTML
report, in one process and with two xdist workers."""

from __future__ import annotations

import json
import re

import pytest

from pytest_nlgeval.cli import main as nlgeval_main
from pytest_nlgeval.core.checks import check_outcome, count_outcomes, outcome_of

# One check per test, so the per-check totals are pytest's per-test totals.
SUITE = '''
    import pytest
    from pytest_nlgeval import assert_score

    def test_good():
        assert_score(0.9, "quality") > 0.5

    def test_bad():
        assert_score(0.1, "quality") > 0.5

    @pytest.mark.xfail(strict=True, reason="a flawed output must fail its check")
    def test_flawed_caught():
        assert_score(0.1, "quality") > 0.5

    @pytest.mark.xfail(strict=True, reason="a flawed output must fail its check")
    def test_flawed_missed():
        assert_score(0.9, "quality") > 0.5

    @pytest.mark.xfail(reason="sometimes fails")
    def test_loose_xpass():
        assert_score(0.9, "quality") > 0.5

    def test_imperative_xfail():
        assert_score(0.9, "quality") > 0.5
        pytest.xfail("a known gap, declared at run time")

    @pytest.mark.xfail(raises=ValueError, reason="only a ValueError is expected")
    def test_wrong_exception():
        assert_score(0.1, "quality") > 0.5

    @pytest.mark.xfail(False, reason="expected to fail elsewhere only")
    def test_condition_false():
        assert_score(0.9, "quality") > 0.5
'''

EXPECTED_OUTCOMES = {
    "test_good": "passed",
    "test_bad": "failed",
    "test_flawed_caught": "xfailed",
    "test_flawed_missed": "xpassed-strict",
    "test_loose_xpass": "xpassed",
    "test_imperative_xfail": "xfailed",
    "test_wrong_exception": "failed",
    "test_condition_false": "passed",
}


@pytest.fixture(autouse=True)
def _own_rootdir(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")


@pytest.mark.parametrize("workers", [None, "2"], ids=["one-process", "xdist"])
def test_every_view_counts_as_pytest_does(pytester, capsys, workers):
    pytester.makepyfile(test_suite=SUITE)
    args = ["-p", "no:cacheprovider", "--nlgeval-json", "results.json", "--nlgeval-report", "report.html"]
    if workers:
        args += ["-n", workers]
    result = pytester.runpytest_subprocess(*args)
    pytest_counts = result.parseoutcomes()
    counts = {k: pytest_counts.get(k, 0) for k in ("passed", "failed", "xfailed", "xpassed")}
    assert counts == {"passed": 2, "failed": 3, "xfailed": 2, "xpassed": 1}

    data = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
    assert data["summary"] == {"checks": 8, **counts, "tests": {**counts, "skipped": 0, "error": 0}}
    by_test = {c["nodeid"].split("::")[-1]: c["outcome"] for c in data["checks"]}
    assert by_test == EXPECTED_OUTCOMES
    # the comparison itself is still recorded as it went
    assert {c["nodeid"].split("::")[-1] for c in data["checks"] if c["passed"]} == {
        "test_good",
        "test_flawed_missed",
        "test_loose_xpass",
        "test_imperative_xfail",
        "test_condition_false",
    }

    # the terminal table: checks, passed, failed, xfailed, xpassed
    result.stdout.fnmatch_lines(
        [
            "*= nlgeval =*",
            "task*kind*name*checks*passed*failed*xfailed*xpassed*mean*min",
            "-  * metric * quality * 8 * 2 * 3 * 2 * 1 *",
            "checks: 3 failed, 2 passed, 2 xfailed, 1 xpassed (each comparison's own result; an xfail test's "
            "checks as pytest counts it)",
        ]
    )

    # nlgeval summary (the job summary of CI)
    capsys.readouterr()
    assert nlgeval_main(["summary", str(pytester.path / "results.json")]) == 0
    markdown = capsys.readouterr().out
    assert "| checks | passed | failed | xfailed | xpassed | regressions | tests |" in markdown
    assert "| 8 | 2 | 3 | 2 | 1 | no baseline | 8 |" in markdown
    assert "8 checks, 2 passed, 3 failed (1 passed in a strict xfail test), 2 expected to fail (xfail), " in markdown
    assert "pytest: 3 failed, 2 passed, 2 xfailed, 1 xpassed\n" in markdown
    worst = markdown.split("**Worst failures**", 1)[1]
    assert "test\\_flawed\\_missed" in worst and "(XPASS(strict))" in worst
    assert "test\\_flawed\\_caught" not in worst and "test\\_loose\\_xpass" not in worst

    # the HTML report
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    shown = {
        name: int(re.search(rf'id="summary-{name}">(\d+)<', html)[1])
        for name in ("checks", "passed", "failed", "xfailed", "xpassed")
    }
    assert shown == {"checks": 8, **counts}
    assert '<span id="summary-pytest">3 failed, 2 passed, 2 xfailed, 1 xpassed</span>' in html
    badges = {
        m["test"]: m["status"]
        for m in re.finditer(
            r'<span class="badge (?P<status>[\w-]+)"[^>]*>[\w-]+</span></td>\s*'
            r'<td class="mono">test_suite.py::(?P<test>\w+)',
            html,
        )
    }
    assert badges == EXPECTED_OUTCOMES
    assert "pytest reports the test [XPASS(strict)] failed" in html


@pytest.mark.parametrize(
    "passed, test, outcome",
    [
        (True, None, "passed"),
        (False, None, "failed"),
        (True, "passed", "passed"),
        (False, "passed", "failed"),  # a failure the test caught itself (pytest.raises) stays a failed check
        (False, "xfailed", "xfailed"),
        (True, "xfailed", "xfailed"),  # the test failed elsewhere, as it was expected to
        (True, "xpassed", "xpassed"),
        (True, "xpassed-strict", "xpassed-strict"),
        (False, "xpassed-strict", "failed"),
        (True, "failed", "passed"),  # another check of the test failed
    ],
)
def test_a_check_follows_its_test(passed, test, outcome):
    assert check_outcome(passed, test) == outcome


def test_a_results_file_without_outcomes_is_counted_as_before():
    old = [
        {"passed": True},
        {"passed": False},
        {"passed": False, "xfail": True},
    ]
    assert [outcome_of(c) for c in old] == ["passed", "failed", "xfailed"]
    assert count_outcomes(old) == {"checks": 3, "passed": 1, "failed": 1, "xfailed": 1, "xpassed": 0}
    strict = [{"passed": True, "outcome": "xpassed-strict"}, {"passed": True, "outcome": "xpassed"}]
    assert count_outcomes(strict) == {"checks": 2, "passed": 0, "failed": 1, "xfailed": 0, "xpassed": 1}


def test_the_results_carry_pytests_own_line_over_every_test(pytester):
    """Tests that make no check (a plain test, a skipped one, one whose fixture fails) are in pytest's line
    too: the results file, the report and the summary repeat that line as it is."""
    pytester.makepyfile(
        test_mixed='''
        import pytest
        from pytest_nlgeval import assert_score

        @pytest.fixture
        def broken():
            raise RuntimeError("no database")

        def test_checked():
            assert assert_score(0.9, "quality") > 0.5

        def test_plain():
            assert True

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass

        def test_setup_fails(broken):
            pass
        '''
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--nlgeval-json", "r.json", "--nlgeval-report", "r.html"
    )
    said = result.parseoutcomes()
    assert said == {"passed": 2, "skipped": 1, "errors": 1}
    data = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert data["summary"]["tests"] == {"passed": 2, "failed": 0, "xfailed": 0, "xpassed": 0, "skipped": 1, "error": 1}
    assert data["summary"]["checks"] == data["summary"]["passed"] == 1
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<span id="summary-pytest">2 passed, 1 skipped, 1 error</span>' in page
