"""A changed assertion is judged against the baseline: a flipped comparison cannot turn a falling score into an
improvement, and a flipped or loosened assertion fails until the baseline is re-recorded."""

from __future__ import annotations

import json
import textwrap

from baseline_results import make_results
from pytest_nlgeval.baseline.compare import changed_assertion, compare
from pytest_nlgeval.baseline.render import headline, render_markdown, render_text
from pytest_nlgeval.baseline.store import Baseline

FLU = ("summarization", "fluency")


def snap(scores, operator=">", threshold=None) -> Baseline:
    results = make_results({FLU: scores}, operator=operator)
    if threshold is not None:
        for check in results["checks"]:
            check["threshold"] = threshold
    return Baseline.from_results(results)


def test_a_flipped_comparison_is_judged_in_the_baselines_direction():
    base = snap([0.9], ">", 0.7)
    head = snap([0.5], "<", 1.0)  # the PR flipped the check while the score fell
    c = compare(base, head)
    (v,) = c.checks
    assert v.status == "regression" and v.higher_is_better
    assert not c.improvements
    assert c.failed and c.changed_assertions == [v]
    assert "flipped" in v.assertion and "> 0.7" in v.assertion and "< 1" in v.assertion
    lines = "\n".join(line for line, _ in render_text(c))
    assert "ASSERTION" in lines and "REGRESSION" in lines
    assert "changed assertion" in headline(c)
    assert "ASSERTION CHANGED" in render_markdown(c)
    assert c.to_dict()["counts"]["changed_assertions"] == 1


def test_a_lowered_threshold_fails_and_is_named():
    c = compare(snap([0.9], ">", 0.7), snap([0.9], ">", 0.3))
    (v,) = c.checks
    assert v.status == "unchanged" and c.failed
    assert v.assertion == "the threshold was lowered: > 0.7 in the baseline, > 0.3 in this run"
    assert c.to_dict()["checks"][0]["assertion"] == v.assertion


def test_a_stricter_assertion_passes():
    assert not compare(snap([0.9], ">", 0.7), snap([0.9], ">", 0.8)).failed
    assert not compare(snap([0.9], ">=", 0.7), snap([0.9], ">", 0.7)).failed
    assert not compare(snap([0.2], "<", 0.5), snap([0.2], "<", 0.4)).failed
    assert not compare(snap([0.9], ">", 0.7), snap([0.9], ">", 0.7)).failed


def test_loosening_under_lower_is_better_and_an_inclusive_comparison_are_changes():
    assert "raised" in compare(snap([0.2], "<", 0.5), snap([0.2], "<", 0.6)).checks[0].assertion
    assert "inclusive" in compare(snap([0.9], ">", 0.7), snap([0.9], ">=", 0.7)).checks[0].assertion
    base = snap([0.9], ">", 0.7).entries
    (entry,) = base.values()
    assert changed_assertion(entry, entry) is None


def test_the_plugin_fails_a_flipped_check_and_accepts_it_on_update(pytester):
    pytester.makeconftest("def pytest_addoption(parser):\n    parser.addoption('--flip', action='store_true')\n")
    pytester.makepyfile(
        test_app=textwrap.dedent(
            """
            from pytest_nlgeval import assert_score

            def test_quality(request):
                if request.config.getoption("--flip"):
                    assert assert_score(0.5, "helpful") < 1.0
                else:
                    assert assert_score(0.9, "helpful") > 0.7
            """
        )
    )
    baseline = pytester.path / "baseline.json"
    first = pytester.runpytest(
        "-p", "no:cacheprovider", "--nlgeval-baseline", str(baseline), "--nlgeval-baseline-update"
    )
    first.assert_outcomes(passed=1)
    stored = json.loads(baseline.read_text())
    assert [e["operator"] for e in stored["checks"].values()] == [">"]
    flipped = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-baseline", str(baseline), "--flip")
    assert flipped.ret != 0
    flipped.stdout.fnmatch_lines(["*ASSERTION*flipped*", "*FAILED*changed assertion*"])
    assert "improved     " not in flipped.stdout.str()
    accepted = pytester.runpytest(
        "-p", "no:cacheprovider", "--nlgeval-baseline", str(baseline), "--flip", "--nlgeval-baseline-update"
    )
    assert accepted.ret == 0
    again = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-baseline", str(baseline), "--flip")
    assert again.ret == 0
