"""``--nlgeval-report`` in real pytest runs (pytester) scored by the tiny random T5: the page is written after
the baseline comparison, with conftest sections, from the option or the ini key."""

from __future__ import annotations

import json
import re

DOC = "Officials said the bridge would reopen next week after repairs. The cat sat on the mat."


def test_report_after_baseline_comparison_with_conftest_sections(pytester, tiny_t5_model):
    pytester.makefile(".ini", pytest="[pytest]\nnlgeval_report = from-ini.html\n")
    pytester.makeconftest('''
        from markupsafe import Markup

        def pytest_nlgeval_report_sections(results):
            n = len(results["checks"])
            return [{"id": "conftest-section", "title": "From conftest", "html": Markup(f"<p>saw {n} checks</p>")}]
    ''')
    pytester.makepyfile(
        test_sum=f'''
        import pytest
        from pytest_nlgeval import assert_dimension
        DOC = {DOC!r}

        @pytest.mark.parametrize("summary", ["The bridge will reopen. Repairs are done.", "<script>alert(1)</script>"])
        def test_summary(summary):
            assert_dimension(summary, "fluency") > 0.0
            assert_dimension(summary, "consistency", source=DOC) > 0.999
    '''
    )
    # An explicit ini file: the model path among the arguments must not move the rootdir (node ids must match).
    common = [
        "-c",
        "pytest.ini",
        "-p",
        "no:cacheprovider",
        "--nlgeval-model",
        str(tiny_t5_model),
        "--nlgeval-baseline",
        "base.json",
    ]
    first = pytester.runpytest(*common, "--nlgeval-baseline-update", "--nlgeval-report", "first.html")
    first.assert_outcomes(failed=2)
    first.stdout.fnmatch_lines(["*nlgeval: HTML report written to *first.html"])
    assert not (pytester.path / "from-ini.html").exists()  # the option wins over the ini key

    # Pretend the baseline run scored one case much higher: the next run has a regression to show.
    baseline = json.loads((pytester.path / "base.json").read_text())
    key = next(k for k in baseline["checks"] if "fluency" in k and "test_summary[The" in k)
    baseline["checks"][key]["score"] = 0.999
    (pytester.path / "base.json").write_text(json.dumps(baseline, indent=2, sort_keys=True))

    second = pytester.runpytest(*common, "--nlgeval-json", "results.json")
    assert second.ret != 0
    page = (pytester.path / "from-ini.html").read_text()
    results = json.loads((pytester.path / "results.json").read_text())
    tests = {"passed": 0, "failed": 2, "xfailed": 0, "xpassed": 0, "skipped": 0, "error": 0}  # pytest's line
    assert results["summary"] == {"checks": 4, "passed": 2, "failed": 2, "xfailed": 0, "xpassed": 0, "tests": tests}
    assert re.search(r'id="summary-failed">2<', page) and re.search(r'id="summary-regressions">1<', page)
    regressed = re.search(re.escape(key) + r".*?</tr>", page.split('id="baseline-regressions"')[1], re.S)
    assert regressed and "0.9990" in regressed.group(0)  # old -> new, from the comparison run before the page
    assert "<p>saw 4 checks</p>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page


def test_report_option_without_checks_writes_an_empty_report(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-report", "out/report.html")
    result.assert_outcomes(passed=1)
    page = (pytester.path / "out" / "report.html").read_text()
    assert 'class="verdict empty"' in page


def test_a_broken_section_is_reported_not_a_crash(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")
    pytester.makeconftest("""
        def pytest_nlgeval_report_sections(results):
            return [{"id": "bad id", "title": "t", "html": ""}]
    """)
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-report", "report.html")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*nlgeval: HTML report NOT written: *report.html: ValueError: *section id 'bad id'*"])
    assert not (pytester.path / "report.html").exists()
