"""``assert_judged``: the G-Eval criterion judge over HTTP, against an OpenAI-compatible stand-in on loopback.

The stand-in writes evaluation steps, fills the answer form from the "quality N" marker of the output and,
when asked, returns log-probabilities for the score token (0.6 on N, 0.3 on N+1, the rest on a token that is
not a score). So the logprob-weighted score is known exactly; an output marked UNPARSEABLE gets an answer
without a score; each request is counted, so a test can tell what the disk cache answered.
"""

import json
import math
import os
import re
import textwrap

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("dspy", reason="the judges extra (dspy) is not installed")
# imported here, outside the in-process pytest runs, which would unload it after each run
pytest.importorskip("litellm", reason="the judges extra (litellm, via dspy) is not installed")

from openai_stub import OpenAIStub, free_port  # noqa: E402

from pytest_nlgeval.errors import NLGEvalError  # noqa: E402
from pytest_nlgeval.judges.criterion import (  # noqa: E402
    JudgedParseError,
    build_judge,
    judge_options,
    parse_score,
    parse_steps,
    weighted_score,
)

STEPS = "1. Read the question and the output.\n2. Check the output against the criterion.\n3. Pick the score."


def expected(q: int) -> float:
    """The weighted score the stand-in's log-probabilities give for a written score q."""
    probs = {q: 0.6, min(q + 1, 5): 0.3} if q < 5 else {5: 0.9}
    return sum(s * p for s, p in probs.items()) / sum(probs.values())


def responder(request, *, logprobs=True):
    text = request["messages"][-1]["content"]
    if "numbered steps" in text:
        return STEPS, None
    output = text.split("\nOutput:\n", 1)[1]
    if "UNPARSEABLE" in output:
        return "This output is very good overall.", None
    m = re.search(r"quality (\d)", output)
    q = int(m.group(1)) if m else 3
    content = f"Score: {q}\nReason: the output shows quality {q}."
    if not (logprobs and request.get("logprobs")):
        return content, None
    tokens = ["Score", ":", " ", str(q), "\n", "Reason", ": the output shows quality ", str(q), "."]
    top = [{"token": str(q), "logprob": math.log(0.6)}, {"token": "x", "logprob": math.log(0.1)}]
    if q < 5:
        top.insert(1, {"token": str(q + 1), "logprob": math.log(0.3)})
    content_lp = [
        {"token": t, "logprob": -0.1, "bytes": None, "top_logprobs": top if i == 3 else []}
        for i, t in enumerate(tokens)
    ]
    return content, {"content": content_lp}


SUITE = """
    import pytest
    from pytest_nlgeval import assert_judged

    QUESTION = "How do I reset the router?"

    def test_helpful():
        assert assert_judged("answer with quality 4: hold the button", "The answer is helpful.", input=QUESTION) >= 3

    def test_weak():
        assert_judged("answer with quality 1: no idea", "The answer is helpful.", input=QUESTION) >= 3

    def test_unparseable():
        assert_judged("UNPARSEABLE answer", "The answer is helpful.", input=QUESTION) >= 3

    def test_fixture(judged):
        assert judged("answer with quality 5: unplug it", "The answer is concise.", scale=(1, 5)) > 4
"""


def run_suite(pytester, server, *extra, suite=SUITE):
    pytester.makepyfile(test_suite=textwrap.dedent(suite))
    out = pytester.path / "results.json"
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--nlgeval-judge-lm",
        "openai/stub",
        "--nlgeval-judge-api-base",
        server.api_base,
        "--nlgeval-json",
        str(out),
        *extra,
    )
    return result, json.loads(out.read_text())


def test_criterion_judging_with_logprobs_cache_and_parse_failures(pytester):
    with OpenAIStub("rule", responder=responder) as server:
        first, results = run_suite(pytester, server)
        asked = server.requests
        bodies = list(server.bodies)
        second, again = run_suite(pytester, server)
        asked_again = server.requests - asked
    first.assert_outcomes(passed=2, failed=2)
    checks = {c["nodeid"].split("::")[-1]: c for c in results["checks"]}
    helpful = checks["test_helpful"]
    assert helpful["kind"] == "judged" and helpful["name"] == "the_answer_is_helpful"
    assert helpful["score"] == pytest.approx(expected(4))
    details = helpful["details"]
    assert details["method"] == "logprobs" and details["criterion"] == "The answer is helpful."
    assert details["steps"] == parse_steps(STEPS) and details["rationale"] == "the output shows quality 4"
    assert details["samples"][0]["distribution"] == {"4": pytest.approx(2 / 3), "5": pytest.approx(1 / 3)}
    assert details["samples"][0]["mass"] == pytest.approx(0.9)
    assert checks["test_weak"]["score"] == pytest.approx(expected(1)) and not checks["test_weak"]["passed"]
    assert (
        checks["test_fixture"]["score"] == pytest.approx(5.0)
        and checks["test_fixture"]["name"] == "the_answer_is_concise"
    )
    assert "test_unparseable" not in checks  # no number was made up for it
    first.stdout.fnmatch_lines(["*JudgedParseError*no score from 1 to 5*asked twice*"])
    # temperature 0, n = 1, log-probabilities asked; the retry of the unparseable answer samples
    forms = [b for b in bodies if "Output:" in b["messages"][-1]["content"]]
    assert all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in forms)
    assert sorted(b["temperature"] for b in forms) == [0.0] * 4 + [0.7]
    # two criteria: their steps were written once each; 4 forms + 1 retry
    judges = results["judges"]
    assert asked == judges["calls"] == 2 + 5
    assert judges["judged"] == 3 and judges["retries"] == 1 and judges["parse_failures"] == 1
    assert judges["prompt_tokens"] == 10 * asked and judges["completion_tokens"] == 5 * asked
    first.stdout.fnmatch_lines(
        ["*judged 3 outputs: 7 LLM calls (0 from cache)*1 answers asked again, 1 without a score (parse failures)*"]
    )
    # the judge's identity is the evaluator: model, parameters, criterion, steps
    fp = results["evaluators"][helpful["evaluator"]]
    assert fp["kind"] == "judge" and fp["model"] == "openai/stub" and fp["criterion"] == "The answer is helpful."
    assert fp["steps"] == details["steps"] and fp["params"]["temperature"] == 0.0 and fp["scale"] == [1, 5]
    assert checks["test_fixture"]["evaluator"] != helpful["evaluator"]
    # a second process: every scored answer from the disk cache, the same scores and the same judge; the two
    # answers without a score were not kept, so they are asked for again (a fixed server would be heard)
    second.assert_outcomes(passed=2, failed=2)
    assert asked_again == 2 and again["judges"]["calls"] == 2 and again["judges"]["cache_hits"] == asked - 2
    assert [c["score"] for c in again["checks"]] == [c["score"] for c in results["checks"]]
    assert set(again["evaluators"]) == set(results["evaluators"])


def test_skip_on_parse_failure_and_written_scores_without_logprobs(pytester):
    with OpenAIStub("rule", responder=lambda r: responder(r, logprobs=False)) as server:
        result, results = run_suite(pytester, server, "--nlgeval-judge-on-parse-failure", "skip", "-rs")
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    checks = {c["nodeid"].split("::")[-1]: c for c in results["checks"]}
    assert checks["test_helpful"]["score"] == 4.0 and checks["test_helpful"]["details"]["method"] == "written"
    assert results["judges"]["parse_failures"] == 1
    result.stdout.fnmatch_lines(["*SKIPPED*no score from 1 to 5*"])


def test_samples_average_and_record_their_spread(pytester, monkeypatch):
    counter = {"n": 0}

    def varying(request):
        text = request["messages"][-1]["content"]
        if "numbered steps" in text:
            return STEPS, None
        counter["n"] += 1
        return f"Score: {2 + counter['n'] % 3}\nReason: sample {counter['n']}.", None

    suite = """
        from pytest_nlgeval import assert_judged, samples

        def app():
            return "an answer"

        def test_pass_rate():
            judged = assert_judged(samples(app, n=2), "The answer is helpful.")
            assert judged.fraction(above=2) >= 0.5
    """
    with OpenAIStub("rule", responder=varying) as server:
        result, results = run_suite(
            pytester, server, "--nlgeval-judge-samples", "3", "--nlgeval-judge-temperature", "0.8", suite=suite
        )
    result.assert_outcomes(passed=1)
    aggregate = next(c for c in results["checks"] if c["kind"] == "aggregate")
    assert aggregate["details"]["samples"]["n"] == 2 and aggregate["details"]["samples"]["of"].endswith("app")
    assert aggregate["details"]["samples"]["distinct"] == 1
    # two outputs, three samples each: the six written scores cycle 3, 4, 2, 3, 4, 2
    assert [case["score"] for case in aggregate["details"]["cases"]] == [3.0, 3.0]
    fp = next(iter(results["evaluators"].values()))
    assert fp["samples"] == 3 and fp["params"]["temperature"] == 0.8
    # the app gave the same text twice: the second output's three samples are the first's, from the cache
    assert results["judges"]["calls"] == 1 + 3 and results["judges"]["cache_hits"] == 3


def test_samples_at_temperature_zero_is_a_usage_error(pytester):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--nlgeval-judge-lm", "openai/x", "--nlgeval-judge-samples", "0")
    result.stderr.fnmatch_lines(["*--nlgeval-judge-samples / nlgeval_judge_samples must be a positive integer*"])
    with pytest.raises(ValueError, match="temperature 0 would be one answer 3 times"):
        build_judge(judge_options({"judge_lm": "openai/x", "judge_samples": "3"}), cache=False)


def test_no_judge_configured_names_the_options(pytester):
    pytester.makepyfile(
        "from pytest_nlgeval import assert_judged\n"
        "def test_x():\n    assert_judged('hi', 'The reply is polite.') >= 3\n"
    )
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*JudgeNotConfigured*--nlgeval-judge-lm*NLGEVAL_JUDGE_LM*"])


def test_options_come_from_ini_and_environment(pytester, monkeypatch):
    with OpenAIStub("rule", responder=responder) as server:
        monkeypatch.setenv("NLGEVAL_JUDGE_API_BASE", server.api_base)
        pytester.makeini("[pytest]\nnlgeval_judge_lm = openai/from-ini\nnlgeval_judge_logprobs = off\n")
        pytester.makepyfile(
            "from pytest_nlgeval import assert_judged\n"
            "def test_x():\n    assert assert_judged('quality 2 reply', 'The reply is polite.') >= 2\n"
        )
        result = pytester.runpytest("-p", "no:cacheprovider")
        bodies = list(server.bodies)
    result.assert_outcomes(passed=1)
    assert bodies and all(b["model"] == "from-ini" and "logprobs" not in b for b in bodies)


def test_rag_criteria_name_the_texts_they_need():
    with OpenAIStub("rule", responder=responder) as server:
        judge = build_judge(judge_options({"judge_lm": "openai/stub", "judge_api_base": server.api_base}), cache=False)
        with pytest.raises(TypeError, match="rag/faithfulness|faithfulness.*needs context="):
            judge.score("Paris.", "rag/faithfulness", recorder=None)
        score = judge.score(
            "quality 5: Paris.", "rag/faithfulness", context=["Paris is the capital of France."], recorder=None
        )
        prompt = server.bodies[-1]["messages"][-1]["content"]
    assert score.name == "faithfulness" and score.task == "rag" and score.kind == "judged"
    assert "Retrieved context:\n[1] Paris is the capital of France." in prompt
    assert score.details["criterion"].startswith("Faithfulness:")


def test_server_failures_are_named_errors(tmp_path):
    settings = judge_options(
        {"judge_lm": "openai/stub", "judge_api_base": f"http://127.0.0.1:{free_port()}/v1", "judge_timeout": "5"}
    )
    from pytest_nlgeval.llm.cache import JudgeServerError

    with pytest.raises(JudgeServerError, match="JudgeServerUnreachable"):
        build_judge(settings, cache_dir=tmp_path).score("x", "The reply is polite.", recorder=None)
    with OpenAIStub("error") as server:
        settings = judge_options({"judge_lm": "openai/stub", "judge_api_base": server.api_base})
        with pytest.raises(JudgeServerError, match="JudgeServerHTTPError.*the model crashed"):
            build_judge(settings, cache_dir=tmp_path).score("x", "The reply is polite.", recorder=None)
    with OpenAIStub("slow", delay=30, responder=responder) as server:
        settings = judge_options({"judge_lm": "openai/stub", "judge_api_base": server.api_base, "judge_timeout": "1"})
        with pytest.raises(JudgeServerError, match="JudgeServerTimeout"):
            build_judge(settings, cache_dir=tmp_path).score("x", "The reply is polite.", recorder=None)


# -- the parts, without a server ---------------------------------------------------------------------------


def test_parse_score_reads_the_form_and_refuses_what_is_not_in_the_scale():
    assert parse_score("Score: 4\nReason: clear and short.", (1, 5)) == (4, 7, "clear and short")
    assert parse_score("**Score:** 2 - Reason: vague", (1, 5))[0] == 2
    assert parse_score("3\nThe answer is fine.", (1, 5))[:2] == (3, 0)
    assert parse_score("4/5", (1, 5))[0] == 4
    assert parse_score("1. Read the output.\n2. Judge it.", (1, 5)) is None  # an echoed list is no score
    assert parse_score("Score: 7", (1, 5)) is None
    assert parse_score("excellent", (1, 5)) is None
    assert parse_score("Score: 10", (1, 10))[0] == 10
    assert parse_steps("Steps:\n1. Read it.\n2) Check it.\n- Score it.\nthanks") == [
        "Read it.",
        "Check it.",
        "Score it.",
    ]


def test_weighted_score_is_the_geval_mean_over_the_scale_tokens():
    content = [
        {"token": "Score: ", "logprob": 0.0, "top_logprobs": []},
        {
            "token": "4",
            "logprob": math.log(0.5),
            "top_logprobs": [
                {"token": "4", "logprob": math.log(0.5)},
                {"token": " 2", "logprob": math.log(0.25)},
                {"token": "9", "logprob": math.log(0.15)},
                {"token": "four", "logprob": math.log(0.1)},
            ],
        },
    ]
    value, dist, mass = weighted_score({"content": content}, "Score: 4", 7, 4, (1, 5))
    assert value == pytest.approx((4 * 0.5 + 2 * 0.25) / 0.75) and mass == pytest.approx(0.75)
    assert dist == {"2": pytest.approx(1 / 3), "4": pytest.approx(2 / 3)}
    assert weighted_score(None, "Score: 4", 7, 4, (1, 5)) is None
    assert weighted_score({"content": content}, "Score: 4", 7, 4, (1, 10)) is None  # "1" would be ambiguous


def test_judge_options_are_checked():
    with pytest.raises(NLGEvalError, match="judge-temperature.*-1"):
        judge_options({"judge_temperature": "-1"})
    with pytest.raises(NLGEvalError, match="judge-logprobs.*on or off"):
        judge_options({"judge_logprobs": "maybe"})
    with pytest.raises(NLGEvalError, match="error, skip"):
        judge_options({"judge_on_parse_failure": "zero"})
    assert judge_options({})["judge_samples"] == 1


def test_a_parse_failure_is_an_error_not_a_number(tmp_path):
    with OpenAIStub("rule", responder=responder) as server:
        judge = build_judge(
            judge_options({"judge_lm": "openai/stub", "judge_api_base": server.api_base}), cache_dir=tmp_path
        )
        with pytest.raises(JudgedParseError) as info:
            judge.judge("UNPARSEABLE", "The reply is polite.")
    assert len(info.value.answers) == 2 and judge.stats.parse_failures == 1 and judge.stats.judged == 0


def test_judge_command_on_a_file(tmp_path, capsys):
    from pytest_nlgeval.cli import main

    data = tmp_path / "answers.jsonl"
    rows = [
        {"output": "answer with quality 4", "input": "q1?"},
        {"output": "UNPARSEABLE", "input": "q2?"},
        {"output": "answer with quality 2", "context": ["c1", "c2"]},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with OpenAIStub("rule", responder=responder) as server:
        args = [
            "judge",
            str(data),
            "--criterion",
            "The answer is helpful.",
            "--lm",
            "openai/stub",
            "--api-base",
            server.api_base,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--json",
            str(tmp_path / "o.json"),
        ]
        code = main(args)
        out = capsys.readouterr().out
        # the second run: the scored answers from the cache, the two without a score asked again
        assert main(args) == 1 and server.requests == 1 + 3 + 1 + 2
    assert code == 1  # a row was left unscored
    report = json.loads((tmp_path / "o.json").read_text())
    assert [r["score"] for r in report["rows"]] == [pytest.approx(expected(4)), None, pytest.approx(expected(2))]
    assert report["usage"]["parse_failures"] == 1 and report["judge"]["criterion"] == "The answer is helpful."
    assert "line    2: no score (parse failure, asked twice)" in out and "2 of 3 outputs judged" in out
    assert main(["judge", str(data), "--criterion", "x"]) == 2 and "--lm" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text('{"input": "no output"}\n')
    assert main(["judge", str(tmp_path / "bad.jsonl"), "--criterion", "x", "--lm", "openai/x"]) == 2
    assert "bad.jsonl:1: each line needs a non-empty string \"output\"" in capsys.readouterr().err


def test_no_weight_repacking_changes_the_defaults_inside_the_block_only():
    low = pytest.importorskip("llama_cpp.llama_cpp", reason="llama-cpp-python is not installed")
    from pytest_nlgeval.llm.llamacpp import no_weight_repacking

    assert low.llama_model_default_params().use_extra_bufts is True
    with no_weight_repacking():
        assert low.llama_model_default_params().use_extra_bufts is False
    assert low.llama_model_default_params().use_extra_bufts is True


def scale_responder(request):
    """A base model's answer: prose, never the form; with log-probabilities, the first position holds the
    scale's digits among its alternatives (0.5 on "4", 0.2 on "5", 0.3 on prose)."""
    text = request["messages"][-1]["content"]
    if "numbered steps" in text:
        return STEPS, None
    prose = "The output is an answer to a question about routers and it"
    if not request.get("logprobs"):
        return prose, None
    top = [
        {"token": " The", "logprob": math.log(0.3)},
        {"token": "4", "logprob": math.log(0.5)},
        {"token": "5", "logprob": math.log(0.2)},
    ]
    return prose, {"content": [{"token": " The", "logprob": math.log(0.3), "top_logprobs": top}]}


def test_reading_the_scale_scores_a_model_that_never_fills_the_form(pytester):
    suite = """
        from pytest_nlgeval import assert_judged

        def test_helpful():
            assert assert_judged("hold the button", "The answer is helpful.", input="How do I reset it?") >= 3
    """
    with OpenAIStub("rule", responder=scale_responder) as server:
        form, _ = run_suite(pytester, server, "--nlgeval-judge-on-parse-failure", "skip", suite=suite)
        form.assert_outcomes(skipped=1)  # the written form: no score in prose, asked twice, never a number
        scale, results = run_suite(pytester, server, "--nlgeval-judge-read", "scale", suite=suite)
        bodies = [b for b in server.bodies if "Output:" in b["messages"][-1]["content"]]
    scale.assert_outcomes(passed=1)
    check = results["checks"][0]
    assert check["score"] == pytest.approx((4 * 0.5 + 5 * 0.2) / 0.7)
    assert check["details"]["method"] == "scale"
    assert check["details"]["samples"][0]["distribution"] == {"4": pytest.approx(5 / 7), "5": pytest.approx(2 / 7)}
    assert bodies[-1]["max_tokens"] == 2 and bodies[-1]["top_logprobs"] == 20  # two decoding steps, not a form
    assert results["judges"]["parse_failures"] == 0
    # reading the scale is part of the judge's identity: never compared with a written-form baseline
    assert results["evaluators"][check["evaluator"]]["read"] == "scale"


def test_scale_distribution_ignores_tokens_outside_the_scale_and_bad_logprobs():
    from pytest_nlgeval.judges.criterion import scale_distribution

    position = {
        "token": "\n",
        "top_logprobs": [
            {"token": "7", "logprob": -0.1},  # outside 1-5
            {"token": "2", "logprob": 1000},  # not a log-probability
            {"token": "3", "logprob": "-0.5"},  # a string, read as a number
            {"token": "x", "logprob": None},
        ],
    }
    value, distribution, mass = scale_distribution({"content": [position]}, (1, 5))
    assert value == 3.0 and distribution == {"3": 1.0} and mass == pytest.approx(math.exp(-0.5))
    assert scale_distribution({"content": [{"token": "a", "top_logprobs": []}]}, (1, 5)) is None
    assert scale_distribution(None, (1, 5)) is None
    assert scale_distribution({"content": [position]}, (0, 10)) is None  # two-digit scales are ambiguous


def test_completion_reading_falls_back_to_the_form_on_a_server_without_completions(pytester):
    """The stand-in answers only chat completions (404 elsewhere): reading by completion falls back to the
    answer form and scores as the form does."""
    suite = """
        from pytest_nlgeval import assert_judged

        def test_helpful():
            assert assert_judged("answer with quality 4: hold it", "The answer is helpful.", input="How?") >= 3
    """
    with OpenAIStub("rule", responder=responder) as server:
        result, results = run_suite(pytester, server, "--nlgeval-judge-read", "completion", suite=suite)
    result.assert_outcomes(passed=1)
    check = results["checks"][0]
    assert check["score"] == pytest.approx(expected(4)) and check["details"]["method"] == "logprobs"


def test_completion_logprobs_are_read_in_both_server_formats():
    from pytest_nlgeval.llm.cache import completion_logprobs as _completion_logprobs
    from pytest_nlgeval.judges.criterion import scale_distribution

    legacy = {"choices": [{"logprobs": {"tokens": ["4"], "top_logprobs": [{"4": math.log(0.6), "3": math.log(0.2)}]}}]}
    value, distribution, _ = scale_distribution(_completion_logprobs(legacy), (1, 5))
    assert value == pytest.approx((4 * 0.6 + 3 * 0.2) / 0.8) and set(distribution) == {"3", "4"}
    content = {
        "choices": [{"logprobs": {"content": [{"token": "5", "top_logprobs": [{"token": "5", "logprob": 0.0}]}]}}]
    }
    assert scale_distribution(_completion_logprobs(content), (1, 5))[0] == 5.0
    assert _completion_logprobs({"choices": [{"logprobs": None}]}) is None
    assert _completion_logprobs({"choices": [{"logprobs": {"tokens": ["a"], "top_logprobs": [{"a": -0.1}]}}]}) is None
    assert _completion_logprobs("not json") is None


# -- faults: what is cached, corrupt entries, time-outs ----------------------------------------------------


def test_an_answer_without_a_score_is_not_replayed_after_the_server_is_fixed(tmp_path):
    broken = {"on": True}

    def flaky(request):
        if broken["on"] and "numbered steps" not in request["messages"][-1]["content"]:
            return "I cannot help with that.", None  # no score: a misconfigured model
        return responder(request)

    settings = judge_options({"judge_lm": "openai/stub", "judge_api_base": None})
    with OpenAIStub("rule", responder=flaky) as server:
        settings["judge_api_base"] = server.api_base
        with pytest.raises(JudgedParseError):
            build_judge(settings, cache_dir=tmp_path).judge("answer with quality 4", "The reply is polite.")
        broken["on"] = False  # the server is fixed: the next run asks again instead of replaying the refusal
        judgment = build_judge(settings, cache_dir=tmp_path).judge("answer with quality 4", "The reply is polite.")
        assert round(judgment.value) == 4
        asked = server.requests
        again = build_judge(settings, cache_dir=tmp_path).judge("answer with quality 4", "The reply is polite.")
        assert again.value == judgment.value and server.requests == asked  # a scored answer is cached


def test_a_cache_entry_of_the_wrong_shape_is_set_aside_with_a_warning(tmp_path):
    from pytest_nlgeval.core.cache import CacheWarning

    with OpenAIStub("rule", responder=responder) as server:
        settings = judge_options({"judge_lm": "openai/stub", "judge_api_base": server.api_base})
        first = build_judge(settings, cache_dir=tmp_path).judge("answer with quality 2", "The reply is polite.")
        entries = sorted(p for p in tmp_path.rglob("*.json"))
        assert entries
        for path in entries:
            path.write_text('{"outputs": {"text": 3}}', encoding="utf-8")  # an entry this cache never writes
        with pytest.warns(CacheWarning, match="not an answer this cache writes"):
            again = build_judge(settings, cache_dir=tmp_path).judge("answer with quality 2", "The reply is polite.")
    assert again.value == first.value
    assert len(list(tmp_path.rglob("*.corrupt-*"))) == len(entries)


def test_a_hung_server_fails_within_the_plugins_time_out_naming_its_option(tmp_path):
    import time

    assert judge_options({})["judge_timeout"] == 60.0
    with OpenAIStub("slow", delay=30, responder=responder) as server:
        settings = judge_options({"judge_lm": "openai/stub", "judge_api_base": server.api_base, "judge_timeout": "1"})
        started = time.perf_counter()
        from pytest_nlgeval.llm.cache import JudgeServerTimeout

        with pytest.raises(JudgeServerTimeout) as info:
            build_judge(settings, cache_dir=tmp_path).judge("x", "The reply is polite.")
        elapsed = time.perf_counter() - started
    assert elapsed < 10, elapsed  # one request, no retries
    assert "--nlgeval-judge-timeout" in str(info.value) and "--timeout" not in str(info.value).replace(
        "-judge-timeout", ""
    )
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chain through httpx and litellm


def test_a_judge_on_an_openai_compatible_server_imports_neither_dspy_nor_litellm(tmp_path):
    """The first judged check does not pay seconds of imports it does not need: a judge pointed at a server
    talks to it with the project's own client (the standard library), from a fresh interpreter."""
    import subprocess
    import sys

    script = tmp_path / "first_call.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys, threading
            from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

            class Server(BaseHTTPRequestHandler):
                def log_message(self, *args):
                    pass

                def do_POST(self):
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    prompt = body["messages"][-1]["content"]
                    text = "Score: 4\\nReason: helpful" if "Evaluation steps" in prompt else "1. Read it."
                    answer = json.dumps({"choices": [{"message": {"content": text}}], "usage": {}}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)

            server = ThreadingHTTPServer(("127.0.0.1", 0), Server)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            from pytest_nlgeval.judges.criterion import build_judge, judge_options

            base = f"http://127.0.0.1:{server.server_address[1]}/v1"
            judge = build_judge(judge_options({"judge_lm": "openai/judge", "judge_api_base": base}), cache=False)
            value = judge.judge("It is helpful.", "The answer is helpful.", input="q").value
            print(value, "dspy" in sys.modules, "litellm" in sys.modules)
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    value, dspy_loaded, litellm_loaded = done.stdout.split()
    assert 1.0 <= float(value) <= 5.0
    assert (dspy_loaded, litellm_loaded) == ("False", "False")
