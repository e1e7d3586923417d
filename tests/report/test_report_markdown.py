"""Markdown summaries for the job summary and the sticky pull-request comment: content, escaping, limits."""

from __future__ import annotations

import copy

import pytest

from pytest_nlgeval.cli import main as cli_main
from pytest_nlgeval.report import COMMENT_LIMIT, STEP_SUMMARY_LIMIT, load_results, pr_comment, step_summary
from pytest_nlgeval.report.markdown import comment_marker, md_escape
from paths import DATA

URL = "https://github.com/owner/repo/actions/runs/1/artifacts/2"


@pytest.fixture()
def results():
    return load_results(DATA / "report_results.json")


def huge_results(n_checks: int, name_len: int = 400) -> dict:
    """Many failing checks with long node ids and their regressions: far beyond both size limits."""
    checks, verdicts = [], []
    for i in range(n_checks):
        nodeid = f"tests/test_big.py::test_case[{'x' * name_len}-{i}]"
        key = f"{nodeid}::fluency::0"
        checks.append(
            {
                "key": key,
                "nodeid": nodeid,
                "kind": "dimension",
                "name": "fluency",
                "task": "summarization",
                "index": 0,
                "score": 0.1 + (i % 50) / 1000,
                "operator": ">",
                "threshold": 0.7,
                "passed": False,
                "evaluator": None,
                "details": {},
            }
        )
        verdicts.append(
            {
                "key": key,
                "status": "regression",
                "old": 0.9,
                "new": checks[-1]["score"],
                "change": checks[-1]["score"] - 0.9,
                "tolerance": 0.05,
            }
        )
    return {
        "schema": "pytest-nlgeval/results",
        "version": 1,
        "checks": checks,
        "summary": {"checks": n_checks, "passed": 0, "failed": n_checks},
        "baseline": {"path": "b.json", "status": "regression", "checks": verdicts, "suites": []},
    }


def test_summary_lists_totals_regressions_failures_and_link(results):
    text = step_summary(results, artifact_url=URL)
    assert text.startswith("## ❌ pytest-nlgeval: 29 checks, 20 passed, 9 failed, 3 regressions")
    assert "| 29 | 20 | 9 | 0 | 0 | 3 | 14 |" in text
    assert "0.8300 → 0.2909" in text and "0.7900 → 0.6600" in text  # regressions, old -> new
    assert "summarization/consistency | 6 | 0.6789 → 0.6462" in text  # the dimension whose mean dropped
    assert f"[Full HTML report]({URL})" in text
    # worst failure first: the largest shortfall below its threshold
    failures = [line for line in text.splitlines() if line.startswith("| tests/")][2:]
    assert "test\\_summary\\_quality\\[4\\] | summarization/consistency | 0.1291" in failures[0]


def test_comment_starts_with_its_marker(results):
    text = pr_comment(results, artifact_url=URL, marker_id="ubuntu-py3.11")
    assert text.splitlines()[0] == "<!-- pytest-nlgeval-report:ubuntu-py3.11 -->"
    with pytest.raises(ValueError, match="marker id"):
        comment_marker("two words")


def test_untrusted_text_cannot_break_out(results):
    bad = copy.deepcopy(results)
    check = next(c for c in bad["checks"] if not c["passed"])
    check["nodeid"] = "tests/t.py::test[a|b\n<script>alert(1)</script> @octocat `x` **y**]"
    text = step_summary(bad)
    line = next(row for row in text.splitlines() if "octocat" in row)
    assert line.count("|") == 5 and "&#124;" in line  # the pipe is an entity: still four cells
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "@octocat" not in text and "&#64;octocat" in text
    assert "`" not in line and "\\*\\*y\\*\\*" in line
    assert md_escape("a\r\nb") == "a  b"


def test_artifact_url_must_be_a_plain_http_url(results):
    with pytest.raises(ValueError, match="artifact URL"):
        step_summary(results, artifact_url="javascript:alert(1)")
    with pytest.raises(ValueError, match="artifact URL"):
        step_summary(results, artifact_url="https://x.test/a) [click](https://evil.test")
    with pytest.raises(ValueError, match="must be an https URL"):
        step_summary(results, artifact_url="http://x.test/a")


def test_step_summary_stays_under_one_mebibyte():
    results = huge_results(6000)
    text = step_summary(results)
    size = len(text.encode("utf-8"))
    assert size <= STEP_SUMMARY_LIMIT == 1024 * 1024
    assert "and 5950 more regressions (see the HTML report)" in text
    assert "and 5950 more failures" in text
    assert text.startswith("## ❌ pytest-nlgeval: 6000 checks, 0 passed, 6000 failed, 6000 regressions")


def test_comment_stays_under_the_comment_limit():
    results = huge_results(500)
    text = pr_comment(results, artifact_url=URL)
    assert len(text.encode("utf-8")) <= COMMENT_LIMIT == 65536
    assert text.startswith(comment_marker())
    assert "more regressions (see the HTML report)" in text
    assert f"[Full HTML report]({URL})" in text  # the link survives the shortening


def test_text_is_cut_only_as_a_last_resort_and_never_mid_row(results):
    big = huge_results(10, name_len=3000)
    text = step_summary(big, limit=6000)
    assert "*10 regressions (see the HTML report)*" in text and "| check |" not in text  # tables dropped first
    big["evaluators"] = {"e1": {"model": "m" * 8000, "provider": "CPUExecutionProvider"}}
    text = step_summary(big, limit=6000)
    assert len(text.encode("utf-8")) <= 6000
    assert text.endswith("*(summary cut to fit GitHub's size limit; the HTML report has everything)*\n")
    body = text.split("\n\n*(summary cut")[0]
    assert all(line.count("|") in (0, 5, 6, 8) for line in body.splitlines())  # 8: the totals row, seven cells


def test_summary_command_writes_both_formats(tmp_path, capsys):
    path = str(DATA / "report_results.json")
    assert cli_main(["summary", path, "--format", "pr-comment", "--artifact-url", URL, "--marker-id", "job1"]) == 0
    assert capsys.readouterr().out.startswith("<!-- pytest-nlgeval-report:job1 -->")
    out = tmp_path / "summary.md"
    out.write_text("earlier step\n")
    assert cli_main(["summary", path, "-o", str(out)]) == 0
    assert out.read_text().startswith("earlier step\n## ❌")
    assert cli_main(["summary", path, "--artifact-url", "ftp://x"]) == 2
    assert "artifact URL" in capsys.readouterr().err


def test_verdict_icons_follow_failures_then_regressions(results):
    no_baseline = {k: v for k, v in results.items() if k != "baseline"}
    text = step_summary(no_baseline)
    assert text.startswith("## ❌ pytest-nlgeval: 29 checks, 20 passed, 9 failed\n")
    assert "| 29 | 20 | 9 | 0 | 0 | no baseline | 14 |" in text and "Regressed" not in text
    only_regressions = copy.deepcopy(results)
    for check in only_regressions["checks"]:
        check["passed"] = True
    only_regressions["summary"] = {"checks": 29, "passed": 29, "failed": 0}
    text = step_summary(only_regressions)
    assert text.startswith("## ⚠️ pytest-nlgeval: 29 checks, 29 passed, 0 failed, 3 regressions")
    assert "Worst failures" not in text
    clean = {k: v for k, v in only_regressions.items() if k != "baseline"}
    assert step_summary(clean).startswith("## ✅ pytest-nlgeval")
