"""`nlgeval induce` with LLM judges over HTTP, against an OpenAI-compatible stand-in server on loopback.

The whole pipeline goes through DSPy and LiteLLM to a real socket: answers that do not parse are asked
for again, counted and left unscored; a second run is answered by the disk cache without a request; a
server that is down, too slow or failing gives a named error within a bounded time, never a hang.
"""

import json
import math
import os
import time

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download when litellm loads
pytest.importorskip("dspy", reason="the judges extra (dspy) is not installed")
pytest.importorskip("litellm", reason="the judges extra (litellm, via dspy) is not installed")

from induction_fakes import synthetic_rows  # noqa: E402
from openai_stub import OpenAIStub, free_port  # noqa: E402

from pytest_nlgeval.cli import main  # noqa: E402

UNPARSEABLE_LINES = (4, 9, 17)


def write_data(path, n=45):
    rows = []
    for line, row in synthetic_rows(n):
        if line in UNPARSEABLE_LINES:
            row["output"] = "UNPARSEABLE " + row["output"]
        rows.append(row)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def induce_args(data, out, api_base, cache, *extra):
    return [
        "induce",
        str(data),
        "--task",
        "Answer questions",
        "--target",
        "label",
        "-o",
        str(out),
        "--lm",
        "openai/rule-judge",
        "--api-base",
        api_base,
        "--cache-dir",
        str(cache),
        "--threads",
        "2",
        "--n-criteria",
        "2",
        "--n-rubrics",
        "1",
        "--no-robustness",
        *extra,
    ]


def test_induce_over_http_retries_counts_and_caches(tmp_path, capsys):
    data = write_data(tmp_path / "labels.jsonl")
    cache = tmp_path / "llm-cache"
    with OpenAIStub("rule") as server:
        code = main(induce_args(data, tmp_path / "m1.json", server.api_base, cache))
        first = capsys.readouterr()
        assert code == 0, first.err
        requests_first = server.requests
        code = main(induce_args(data, tmp_path / "m2.json", server.api_base, cache))
        second = capsys.readouterr()
        assert code == 0, second.err
        requests_second = server.requests - requests_first
    m1 = json.loads((tmp_path / "m1.json").read_text())
    m2 = json.loads((tmp_path / "m2.json").read_text())
    usage1, usage2 = m1["provenance"]["llm_usage"], m2["provenance"]["llm_usage"]
    # every model call of the first run was one HTTP request; the second run made none
    # (a run asks some prompts twice, e.g. a row in two candidate example sets: the second time is a hit)
    assert usage1["calls"] == requests_first > 0
    assert requests_second == 0 and usage2["calls"] == 0
    assert usage2["cache_hits"] == usage1["calls"] + usage1["cache_hits"]
    assert m2["pls"] == m1["pls"] and [c["name"] for c in m2["components"]] == [c["name"] for c in m1["components"]]
    # the rows marked UNPARSEABLE never parse: each was asked twice, counted, and left unscored
    failures, retries = m1["provenance"]["judge_parse_failures"], m1["provenance"]["judge_retries"]
    train_lines = set(m1["report"]["fit_check"]["lines"])
    bad_train = len(train_lines & set(UNPARSEABLE_LINES))
    assert bad_train > 0
    for judge, count in failures.items():
        if judge == "judge_examples":
            continue  # its example-selection rows differ from the training rows
        assert count == bad_train and retries[judge] == bad_train, (judge, failures, retries)
    assert m1["provenance"]["fit"]["rows_dropped"] == bad_train
    fit = m1["report"]["fit_check"]
    for line, prediction in zip(fit["lines"], fit["predictions"]):
        if line in UNPARSEABLE_LINES:
            assert prediction is None  # never scored: no number was made up for the row
        else:
            assert math.isfinite(prediction)
    assert "left unscored" in first.out and "LLM: " in first.out
    assert f"({usage2['cache_hits']} from cache)" in second.out


def run_failing(tmp_path, api_base, *extra):
    data = write_data(tmp_path / "labels.jsonl", n=30)
    started = time.monotonic()
    code = main(induce_args(data, tmp_path / "m.json", api_base, tmp_path / "cache", *extra))
    return code, time.monotonic() - started


def test_a_server_that_is_down_gives_a_named_error(tmp_path, capsys):
    api_base = f"http://127.0.0.1:{free_port()}/v1"
    code, seconds = run_failing(tmp_path, api_base, "--num-retries", "0", "--timeout", "5")
    err = capsys.readouterr().err
    assert code == 2 and "JudgeServerUnreachable" in err and api_base in err and "Traceback" not in err
    assert seconds < 60
    assert not (tmp_path / "m.json").exists()


def test_a_slow_server_gives_a_time_out_not_a_hang(tmp_path, capsys):
    with OpenAIStub("slow", delay=60) as server:
        code, seconds = run_failing(tmp_path, server.api_base, "--num-retries", "0", "--timeout", "1")
        asked = server.requests
    err = capsys.readouterr().err
    assert code == 2 and "JudgeServerTimeout" in err and "--timeout" in err
    assert seconds < 30  # one time-out per thread at most, then the breaker stops every other request
    assert asked <= 2


def test_a_server_answering_500_gives_a_named_error_after_bounded_retries(tmp_path, capsys):
    with OpenAIStub("error") as server:
        code, seconds = run_failing(tmp_path, server.api_base, "--num-retries", "1", "--timeout", "5")
        asked = server.requests
    err = capsys.readouterr().err
    assert code == 2 and "JudgeServerHTTPError" in err and "the model crashed" in err
    assert asked == 2  # the first request and one retry; nothing after the error
    assert seconds < 60


def test_the_cache_key_ignores_transport_settings(tmp_path):
    from pytest_nlgeval.llm.cache import lm_identity, make_lm, request_key

    a = make_lm("openai/x", api_base="http://127.0.0.1:9/v1", timeout=5, num_retries=0, cache_dir=tmp_path)
    b = make_lm("openai/x", api_base="http://127.0.0.1:9/v1", timeout=500, num_retries=4, cache_dir=tmp_path)
    messages = [{"role": "user", "content": "hi"}]
    assert "timeout" not in lm_identity(a.inner)["params"]
    assert request_key(lm_identity(a.inner), {"timeout": 1}, None, messages) == request_key(
        lm_identity(b.inner), {}, None, messages
    )
