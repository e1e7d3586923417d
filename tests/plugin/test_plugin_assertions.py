"""The assertion DSL inside real pytest runs (pytester), scored by a tiny random T5 model.

A random model gives deterministic scores strictly between 0 and 1, so ``> 0.0`` passes and ``> 0.999``
fails for every input.
"""

from __future__ import annotations

import json

import pytest

# In-process pytester runs unload the modules they imported, and C extensions (numpy, onnxruntime,
# tokenizers) cannot be loaded twice in one process: load them once, before any pytester snapshot.
import nlgeval_runtime.boolqa  # noqa: F401,E402
import onnxruntime  # noqa: F401,E402

DOC = "Officials said the bridge would reopen next week after repairs. The cat sat on the mat."


@pytest.fixture(autouse=True)
def _own_rootdir(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")  # node ids relative to the test folder


def run(pytester, model, *args):
    return pytester.runpytest("-p", "no:cacheprovider", f"--nlgeval-model={model}", *args)


def results(pytester, name="results.json"):
    return json.loads((pytester.path / name).read_text())


def test_passing_and_failing_assertions_with_messages(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_sum=f'''
        import pytest
        from pytest_nlgeval import assert_dimension
        DOC = {DOC!r}

        def test_passes():
            assert_dimension("The bridge will reopen. Repairs are done.", "consistency", source=DOC) > 0.0
            assert assert_dimension("The bridge will reopen.", "fluency") >= 0.0

        def test_fails_bare():
            assert_dimension("The bridge will reopen. The cat sat.", "consistency", source=DOC) > 0.999

        def test_fails_inside_assert():
            assert assert_dimension("The bridge will reopen.", "coherence", source=DOC) >= 0.999

        def test_upper_bound():
            assert_dimension("The bridge will reopen.", "fluency") < 0.001

        @pytest.mark.xfail(strict=True, reason="shows a failure")
        def test_expected_failure():
            assert_dimension("The bridge will reopen.", "fluency") > 0.999
    '''
    )
    result = run(pytester, tiny_t5_model, "--nlgeval-json", "results.json")
    result.assert_outcomes(passed=1, failed=3, xfailed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: consistency (summarization) = 0.*, expected > 0.999",
            "*per-sentence scores (mean of 2):",
            "*?1? 0.*  The bridge will reopen.*",
            "*?2? 0.*  The cat sat.*",
            "*weakest sentence (0.*",
            "*evaluator * (CPUExecutionProvider, fp32)*",
        ]
    )
    assert "coherence (summarization) = 0." in out and "expected >= 0.999" in out
    assert "output: 'The bridge will reopen.'" in out
    assert "fluency (summarization) = 0." in out and "expected < 0.001" in out
    # the terminal summary table
    result.stdout.fnmatch_lines(
        [
            "*= nlgeval =*",
            "task*kind*name*checks*passed*failed*mean*min",
            "summarization * dimension * consistency * 2 * 1 * 1 *",
        ]
    )
    data = results(pytester)
    assert data["schema"] == "pytest-nlgeval/results" and data["version"] == 1
    # the failed check of the xfail test is counted apart, not as a failure
    tests = {"passed": 1, "failed": 3, "xfailed": 1, "xpassed": 0, "skipped": 0, "error": 0}  # pytest's line
    assert data["summary"] == {"checks": 6, "passed": 2, "failed": 3, "xfailed": 1, "xpassed": 0, "tests": tests}
    xfails = [c for c in data["checks"] if c.get("xfail")]
    assert [c["nodeid"] for c in xfails] == ["test_sum.py::test_expected_failure"] and not xfails[0]["passed"]
    fails = [c for c in data["checks"] if c["nodeid"] == "test_sum.py::test_fails_bare"]
    assert len(fails) == 1
    check = fails[0]
    assert check["key"] == "test_sum.py::test_fails_bare::consistency::0"
    assert (check["kind"], check["name"], check["task"], check["operator"], check["threshold"], check["passed"]) == (
        "dimension",
        "consistency",
        "summarization",
        ">",
        0.999,
        False,
    )
    assert [u["text"] for u in check["details"]["units"]] == ["The bridge will reopen.", "The cat sat."]
    assert check["score"] == pytest.approx(sum(u["score"] for u in check["details"]["units"]) / 2)
    assert check["details"]["inputs"] == {"output": "The bridge will reopen. The cat sat.", "source": DOC}
    fingerprint = data["evaluators"][check["evaluator"]]
    assert fingerprint["provider"] == "CPUExecutionProvider" and set(fingerprint["files"]) >= {"model.onnx"}
    assert {c["key"] for c in data["checks"] if c["nodeid"] == "test_sum.py::test_passes"} == {
        "test_sum.py::test_passes::consistency::0",
        "test_sum.py::test_passes::fluency::0",
    }


def test_list_api_aggregates_and_score_many(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_list=f'''
        from pytest_nlgeval import assert_dimensions
        OUTS = ["The bridge will reopen.", "The cat sat on the mat.", "Repairs are done. It is open."]
        DOC = {DOC!r}

        def test_aggregates_pass():
            scores = assert_dimensions(OUTS, "consistency", source=DOC)
            assert len(scores) == 3
            scores.mean() > 0.0
            scores.min() >= 0.0
            scores.fraction(above=0.0) >= 1.0

        def test_min_fails_naming_cases():
            assert_dimensions(OUTS, "fluency").min() > 0.999

        def test_fraction_fails():
            assert_dimensions(OUTS, "coherence", sources=[DOC, DOC, DOC]).fraction(above=0.999) >= 0.5

        def test_score_many_matches_single(nlgeval):
            many = nlgeval.score_batch(OUTS, "fluency")
            assert all(isinstance(v, float) and 0.0 < v < 1.0 for v in many)
            assert many[1] == float(nlgeval.score(OUTS[1], "fluency"))
    '''
    )
    result = run(pytester, tiny_t5_model, "--nlgeval-json", "results.json")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*min(fluency) (summarization) = 0.*, expected > 0.999",
            "*3 of 3 cases are not > 0.999:",
            "*case ?: 0.*'The bridge will reopen.'*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*fraction>0.999(coherence) (summarization) = 0.0000, expected >= 0.5",
            "*0 of 3 cases are > 0.999 (0.0%); 3 are not:",
        ]
    )
    data = results(pytester)
    names = [c["name"] for c in data["checks"] if c["nodeid"] == "test_list.py::test_aggregates_pass"]
    assert names == ["mean(consistency)", "min(consistency)", "fraction>0(consistency)"]
    assert all(c["kind"] == "aggregate" for c in data["checks"])


def test_error_paths_are_clear(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_err='''
        import pytest
        from pytest_nlgeval import assert_dimension, assert_dimensions

        def test_missing_source():
            assert_dimension("A claim.", "consistency") > 0.5

        def test_unknown_dimension():
            assert_dimension("A claim.", "faithfulness") > 0.5

        def test_empty_output():
            assert_dimension("", "fluency") > 0.5

        def test_non_string_output():
            assert_dimension(None, "fluency") > 0.5

        def test_wrong_list_length():
            assert_dimensions(["a.", "b."], "consistency", sources=["only one"]).mean() > 0.5

        def test_dialogue_without_fact():
            assert_dimension("Hi there.", "groundedness", task="dialogue") > 0.5

        def test_fact_has_no_overall():
            assert_dimension("A claim.", "overall", task="fact", source="doc") > 0.5

        def test_threshold_not_a_number():
            assert_dimension("Fine text.", "fluency") > "0.5"
    '''
    )
    result = run(pytester, tiny_t5_model)
    result.assert_outcomes(failed=8)
    result.stdout.fnmatch_lines_random(
        [
            "*InputError: dimension 'consistency' (task 'summarization') needs `source=`*pass source=...",
            "*DimensionError: unknown dimension 'faithfulness' for task 'summarization'; "
            "valid: coherence, consistency, fluency, relevance, overall*",
            "*InputError: output is empty*",
            "*InputError: output must be a str, got NoneType*",
            "*InputError: sources= has 1 entries but there are 2 outputs",
            "*needs `fact=`*",
            "*DimensionError: task 'fact' has no 'overall' score*",
            "*TypeError: a score is compared with a number*",
        ]
    )
    out = result.stdout.str()
    assert "= nlgeval =" not in out  # no check was recorded, so no summary table
    assert "dimensions.py" not in out and "evaluator.py" not in out  # user errors point at the test line


def test_marker_task_model_tolerance_and_junit(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_mark='''
        import pytest
        from pytest_nlgeval import assert_dimension

        @pytest.mark.nlgeval(task="dialogue", tolerance=0.05)
        def test_dialogue(nlgeval):
            assert_dimension("Sure, happy to help.", "coherence", context=["hi", "can you help?"]) > 0.0
            assert nlgeval.score_batch(["Hi.", "Bye."], "understandability")[0] > 0.0

        @pytest.mark.nlgeval("data2text")
        def test_positional_task():
            assert_dimension("The Eagle serves cheap food.", "naturalness") > 0.0

        def test_engagingness_is_a_sum():
            s = assert_dimension("I like it. It is fun. Really fun.", "engagingness", task="dialogue",
                                 context="hi\\n", fact="fun is good")
            assert float(s) == pytest.approx(sum(u["score"] for u in s.details["units"]))
            s > 1.0  # three sentences near 0.5 each: a sum, not a mean
    '''
    )
    result = run(pytester, tiny_t5_model, "--nlgeval-json", "results.json", "--junitxml", "junit.xml")
    result.assert_outcomes(passed=3)
    data = results(pytester)
    by_name = {c["name"]: c for c in data["checks"]}
    assert by_name["coherence"]["task"] == "dialogue" and by_name["coherence"]["tolerance"] == 0.05
    assert by_name["naturalness"]["task"] == "data2text" and "tolerance" not in by_name["naturalness"]
    assert by_name["engagingness"]["details"]["aggregation"] == "sum"
    junit = (pytester.path / "junit.xml").read_text()
    assert '<property name="nlgeval:coherence:0" value="0.' in junit and "&gt; 0 passed" in junit


def test_bad_marker_is_a_usage_error(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_bad='''
        import pytest

        @pytest.mark.nlgeval(taks="dialogue")
        def test_x():
            pass
    '''
    )
    result = run(pytester, tiny_t5_model)
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*nlgeval got unknown argument(s) ??taks??; it takes task, model, tolerance*"])


def test_custom_dimension_through_the_hook(pytester, tiny_t5_model):
    pytester.makeconftest('''
        from pytest_nlgeval.core.dimensions import Dimension

        def pytest_nlgeval_register_dimensions(registry):
            registry.add(Dimension(task="summarization", name="politeness",
                                   question="Is this a polite summary?", fields=("summary", "document")))

        RECORDED = []

        def pytest_nlgeval_check_recorded(check):
            RECORDED.append((check.name, check.passed))

        def pytest_nlgeval_results_ready(config, results):
            results["extra"] = {"seen": len(RECORDED)}
    ''')
    pytester.makepyfile(
        test_custom='''
        from pytest_nlgeval import assert_dimension

        def test_polite(nlgeval):
            s = assert_dimension("Thank you for reading.", "politeness", source="A document.")
            s > 0.0
            direct = nlgeval.score_texts(["question: Is this a polite summary? </s> summary: Thank you for "
                                          "reading. </s> document: A document."])
            assert direct[0][0] == float(s)

        def test_polite_missing_source():
            assert_dimension("Thank you.", "politeness") > 0.0
    '''
    )
    result = run(pytester, tiny_t5_model, "--nlgeval-json", "results.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*dimension 'politeness' (task 'summarization') needs `source=`*"])
    data = results(pytester)
    assert data["extra"] == {"seen": 1}
    assert data["checks"][0]["name"] == "politeness"


def test_marker_model_overrides_the_session_model(pytester, tiny_t5_model, tmp_path):
    pytester.makepyfile(
        test_model=f'''
        import pytest
        from pytest_nlgeval import assert_dimension

        @pytest.mark.nlgeval(model={str(tiny_t5_model)!r})
        def test_marked():
            assert_dimension("Fine text.", "fluency") > 0.0

        def test_unmarked_uses_the_missing_session_model():
            assert_dimension("Fine text.", "fluency") > 0.0
    '''
    )
    result = pytester.runpytest("-p", "no:cacheprovider", f"--nlgeval-model={tmp_path / 'missing-model'}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*ModelNotFoundError*missing-model*", "FAILED test_model.py::test_unmarked_uses_the_missing_session_model*"]
    )


def test_equality_failures_are_explained_by_assertrepr(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_eq='''
        from pytest_nlgeval import assert_dimension

        def test_equal():
            assert assert_dimension("The bridge will reopen. The cat sat.", "fluency") == 0.5
    '''
    )
    result = run(pytester, tiny_t5_model)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["E*assert fluency (summarization) = 0.* == 0.5", "E*per-sentence scores (mean of 2):", "E*weakest sentence*"]
    )


def test_assert_score_records_a_number_of_ones_own(recorder):
    from pytest_nlgeval import assert_score

    recorder.start_test("tests/test_own.py::test_words")
    assert assert_score(87, "answer_words", details={"limit": 120}) <= 120
    with pytest.raises(AssertionError, match=r"answer_words = 130.0000, expected <= 120"):
        assert_score(130, "answer_words") <= 120
    assert [(c.name, c.kind, c.passed, c.index) for c in recorder.checks] == [
        ("answer_words", "metric", True, 0),
        ("answer_words", "metric", False, 1),
    ]
    assert recorder.checks[0].details == {"limit": 120}
    with pytest.raises(TypeError, match="must be a number"):
        assert_score("87", "answer_words")
