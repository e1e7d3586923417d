"""A pytest-xdist worker that crashes never sends its results: its checks are rebuilt from its test reports, the
results say which worker went down, and a baseline update records what it had scored."""

from __future__ import annotations

import json
import textwrap

import pytest

pytest.importorskip("xdist")

SUITE = """
    import os
    from pytest_nlgeval import assert_score

    def test_1_before():
        assert assert_score(0.9, "before") > 0.5

    def test_2_crash():
        assert_score(0.8, "lost") > 0.5
        os._exit(1)

    def test_3_after():
        assert assert_score(0.7, "after") > 0.5
"""


def test_a_crashed_workers_checks_are_rebuilt_and_it_is_named(pytester):
    pytester.makepyfile(test_suite=textwrap.dedent(SUITE))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-n",
        "1",
        "-p",
        "no:randomly",
        "--nlgeval-json",
        "results.json",
        "--nlgeval-baseline",
        "base.json",
        "--nlgeval-baseline-update",
    )
    results = json.loads((pytester.path / "results.json").read_text())
    names = sorted(c["name"] for c in results["checks"])
    assert names == ["after", "before"]  # "lost" was recorded by the test the worker died in
    (lost,) = results["workers_lost"]
    assert lost["rebuilt"] == 1 and lost["worker"].startswith("gw")
    result.stdout.fnmatch_lines(["*xdist worker gw* went down without its results*1 of its checks were rebuilt*"])
    baseline = json.loads((pytester.path / "base.json").read_text())
    assert sorted(e["name"] for e in baseline["checks"].values()) == ["after", "before"]


def test_a_worker_that_finishes_is_not_counted_twice(pytester):
    pytester.makepyfile(
        test_suite=textwrap.dedent(
            """
            from pytest_nlgeval import assert_score

            def test_a():
                assert assert_score(0.9, "a") > 0.5

            def test_b():
                assert assert_score(0.9, "b") > 0.5
            """
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "2", "--nlgeval-json", "results.json")
    result.assert_outcomes(passed=2)
    results = json.loads((pytester.path / "results.json").read_text())
    assert sorted(c["name"] for c in results["checks"]) == ["a", "b"]
    assert "workers_lost" not in results
    junit_free = pytester.runpytest("-p", "no:cacheprovider", "-n", "1", "--junitxml", "junit.xml")
    junit_free.assert_outcomes(passed=2)
    assert "nlgeval_checks" not in (pytester.path / "junit.xml").read_text()
