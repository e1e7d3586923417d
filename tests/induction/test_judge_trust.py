"""The trust rules of the judge client and of the LLM answer cache, against stand-in servers on loopback.

Each server is a plain ``http.server`` in a thread whose answers a test writes byte by byte: redirects to
another origin, answers dripped one byte at a time, HTTP 429 with Retry-After, answers of the wrong shape,
bodies over the size limit. The cache tests then check what is (and is not) kept on disk, and what happens to
files that cannot be read or folders that cannot be written. None of it needs DSPy: a judge pointed at an
OpenAI-compatible server uses the project's own client.
"""

from __future__ import annotations

import errno
import json
import math
import os
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pytest_nlgeval.llm import client as client_module
from pytest_nlgeval.llm.client import MAX_RETRIES, OpenAIClient
from pytest_nlgeval.llm.errors import (
    JudgeServerAnswerError,
    JudgeServerAnswerTooLarge,
    JudgeServerError,
    JudgeServerHTTPError,
    JudgeServerRateLimited,
    JudgeServerRedirect,
    JudgeServerTimeout,
)

CRITERION = "The reply is polite."
ANSWER = "Score: 4\nReason: clear and polite."
P4, P3 = 0.6, 0.4
WEIGHTED = (4 * P4 + 3 * P3) / (P4 + P3)


def form_logprobs() -> dict:
    """Log-probabilities of ANSWER in OpenAI's chat form, the score's token with two alternatives."""
    tokens = ["Score", ":", " ", "4", "\n", "Reason: clear and polite."]
    content = []
    for token in tokens:
        position = {"token": token, "logprob": -0.01, "top_logprobs": [{"token": token, "logprob": -0.01}]}
        if token == "4":
            position["top_logprobs"] = [
                {"token": "4", "logprob": math.log(P4)},
                {"token": "3", "logprob": math.log(P3)},
            ]
        content.append(position)
    return {"content": content}


def chat_answer(content, logprobs=None, **extra) -> dict:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return {"choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 5}, **extra}


def judge_answer(request: dict) -> dict:
    """A cooperative judge: numbered steps for the steps prompt, ANSWER (with logprobs when asked) otherwise."""
    prompt = request["messages"][-1]["content"]
    if "numbered steps" in prompt:
        return chat_answer("1. Read the reply.\n2. Judge its tone.")
    return chat_answer(ANSWER, form_logprobs() if request.get("logprobs") else None)


class Server:
    """A loopback HTTP server; ``respond(handler, request)`` writes each answer (``request``: path, headers,
    the JSON body). Every request is kept in ``requests``."""

    def __init__(self, respond) -> None:
        self.respond = respond
        self.requests: list[dict] = []
        self.stop = threading.Event()
        self._lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def api_base(self) -> str:
        return self.base + "/v1"

    def __enter__(self) -> "Server":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                request = {"path": self.path, "headers": dict(self.headers), "body": body}
                with server._lock:
                    server.requests.append(request)
                try:
                    server.respond(self, request)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def send(handler, status: int, body=None, *, headers: dict | None = None, raw: bytes | None = None) -> None:
    blob = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(blob)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(blob)


def answering(handler, request) -> None:
    send(handler, 200, judge_answer(request["body"]))


def ask(api_base: str, *, timeout: float = 5.0, logprobs: bool = False, api_key: str | None = "sk-test"):
    client = OpenAIClient("openai/judge", api_base=api_base, api_key=api_key, timeout=timeout)
    params = {"logprobs": True, "top_logprobs": 20} if logprobs else {}
    return client(messages=[{"role": "user", "content": "Rate it."}], **params)


def make_judge(api_base: str, cache_dir, *, timeout: float = 5.0, read: str = "form"):
    from pytest_nlgeval.judges.criterion import build_judge, judge_options

    settings = judge_options(
        {"judge_lm": "openai/judge", "judge_api_base": api_base, "judge_timeout": str(timeout), "judge_read": read}
    )
    return build_judge(settings, cache_dir=cache_dir)


def cached_files(folder) -> list:
    return sorted(p for p in folder.rglob("*.json") if not p.name.startswith(".tmp-"))


# -- the client: redirects ---------------------------------------------------------------------------------


def test_a_redirect_to_another_origin_is_refused_and_the_key_never_leaves(tmp_path, monkeypatch):
    with Server(answering) as other:

        def redirect(handler, request):
            send(handler, 302, {}, headers={"Location": other.api_base + "/chat/completions"})

        with Server(redirect) as server:
            with pytest.raises(JudgeServerRedirect) as info:
                ask(server.api_base, api_key="sk-secret")
            message = str(info.value)
            assert other.base.replace("http://", "") in message and "not sent there" in message
            assert "give that address as the API base" in message
            assert isinstance(info.value, JudgeServerHTTPError) and info.value.status == 302

            # through a judge: the check fails with the named error and nothing is cached
            monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
            with pytest.raises(JudgeServerRedirect):
                make_judge(server.api_base, tmp_path / "cache").judge("Thanks a lot!", CRITERION)
        assert other.requests == []  # the other origin saw nothing: no key, no prompt
        assert cached_files(tmp_path) == []


def test_a_same_origin_redirect_is_followed_with_the_request_and_the_key(tmp_path):
    def respond(handler, request):
        if request["path"].startswith("/v1/"):
            send(handler, 307, {}, headers={"Location": "/moved/v1/chat/completions"})
        else:
            answering(handler, request)

    with Server(respond) as server:
        assert ask(server.api_base, api_key="sk-secret") == [ANSWER]
    first, second = server.requests
    assert second["path"] == "/moved/v1/chat/completions" and second["body"] == first["body"]
    assert second["headers"]["Authorization"] == "Bearer sk-secret"


def test_a_redirect_loop_on_the_same_origin_is_bounded():
    def respond(handler, request):
        send(handler, 301, {}, headers={"Location": request["path"] + "x"})

    with Server(respond) as server:
        with pytest.raises(JudgeServerRedirect, match="more than 3 redirects"):
            ask(server.api_base)
    assert len(server.requests) == 4


def test_an_api_base_without_a_scheme_is_a_named_error():
    from pytest_nlgeval.llm.errors import JudgeServerUnreachable

    with pytest.raises(JudgeServerUnreachable, match="is not an http:// or https:// address.*e.g. http://127"):
        ask("127.0.0.1:8080/v1")


# -- the client: one deadline over the whole request -------------------------------------------------------


@pytest.mark.parametrize("where", ["body", "headers"])
def test_the_time_out_bounds_the_whole_request_when_the_server_drips_its_answer(where):
    blob = json.dumps(chat_answer(ANSWER)).encode()

    def drip(handler, request):
        head = (f"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(blob)}\r\n\r\n").encode()
        if where == "body":
            handler.wfile.write(head)
            dripped = blob
        else:
            dripped = head + blob
        for i in range(len(dripped)):  # one byte every 0.1 s: each read is quick, the answer takes long
            if server.stop.is_set():
                return
            handler.wfile.write(dripped[i : i + 1])
            handler.wfile.flush()
            time.sleep(0.1)

    with Server(drip) as server:
        started = time.monotonic()
        with pytest.raises(JudgeServerTimeout, match="within 1.5 s"):
            ask(server.api_base, timeout=1.5)
        elapsed = time.monotonic() - started
    assert elapsed < 3.5, elapsed  # the whole answer would take more than 10 s


# -- the client: retries -----------------------------------------------------------------------------------


def test_http_429_is_asked_again_after_retry_after(tmp_path):
    def respond(handler, request):
        if len(server.requests) == 1:
            send(handler, 429, {"error": {"message": "slow down"}}, headers={"Retry-After": "1"})
        else:
            answering(handler, request)

    with Server(respond) as server:
        started = time.monotonic()
        assert ask(server.api_base, timeout=5) == [ANSWER]
        elapsed = time.monotonic() - started
    assert len(server.requests) == 2 and 1.0 <= elapsed < 4


def test_a_server_that_stays_rate_limited_is_named_so_after_bounded_retries(tmp_path):
    def respond(handler, request):
        send(handler, 429, {"error": {"message": "too many requests"}}, headers={"Retry-After": "0"})

    with Server(respond) as server:
        with pytest.raises(JudgeServerRateLimited) as info:
            ask(server.api_base, timeout=10)
        assert len(server.requests) == 1 + MAX_RETRIES
        message = str(info.value)
        assert "rate limited" in message and "too many requests" in message and "model loaded" not in message
        assert "fewer requests at once" in message

        # through a judge: the check fails with the same error
        with pytest.raises(JudgeServerRateLimited, match="rate limited"):
            make_judge(server.api_base, tmp_path / "cache").judge("Thanks a lot!", CRITERION)


@pytest.mark.parametrize("status,requests,says", [(503, 1 + MAX_RETRIES, "still unavailable"), (500, 1, "HTTP 500")])
def test_only_statuses_that_say_come_back_later_are_retried(status, requests, says):
    def respond(handler, request):
        send(handler, status, {"error": {"message": "loading model"}}, headers={"Retry-After": "0"})

    with Server(respond) as server:
        with pytest.raises(JudgeServerHTTPError, match=says) as info:
            ask(server.api_base)
        assert len(server.requests) == requests
    assert type(info.value) is JudgeServerHTTPError and info.value.status == status


def test_a_retry_after_longer_than_the_time_out_is_not_waited_for():
    def respond(handler, request):
        send(handler, 429, {}, headers={"Retry-After": "30"})

    with Server(respond) as server:
        started = time.monotonic()
        with pytest.raises(JudgeServerRateLimited, match="asks to wait 30 s, more than the 3 s time-out"):
            ask(server.api_base, timeout=3)
        assert time.monotonic() - started < 2 and len(server.requests) == 1


# -- the client: answers of the wrong shape and size -------------------------------------------------------


WRONG_SHAPES = [
    ('{"choices": [{"message": "Score: 4"}]}', "choices[0].message"),
    ('{"choices": [null]}', "choices[0]"),
    ('{"choices": [{"message": {"content": 4}}]}', "choices[0].message.content"),
    ('{"choices": [{"message": {"content": "Score: 4"}}], "usage": "many"}', "usage"),
    ('{"choices": [{"message": {"content": "Score: 4"}}], "usage": {"prompt_tokens": 1e400}}', "usage.prompt_tokens"),
    (
        '{"choices": [{"message": {"content": "Score: 4"}}], "usage": {"completion_tokens": "5"}}',
        "usage.completion_tokens",
    ),
    ('{"choices": {}}', "choices"),
    ('{"choices": []}', "choices"),
    ("[]", "body"),
    ("<html>proxy login</html>", "body"),
    (
        '{"choices": [{"message": {"content": "Score: 4"}, "logprobs": "lots"}]}',
        "choices[0].logprobs",
    ),
    (
        '{"choices": [{"message": {"content": "Score: 4"}, "logprobs": {"content": ["4"]}}]}',
        "choices[0].logprobs.content[0]",
    ),
    (
        '{"choices": [{"message": {"content": "4"}, "logprobs": {"content": [{"token": "4", "top_logprobs": 7}]}}]}',
        "choices[0].logprobs.content[0].top_logprobs",
    ),
]


@pytest.mark.parametrize("raw,field", WRONG_SHAPES, ids=[f for _, f in WRONG_SHAPES])
def test_an_answer_of_the_wrong_shape_is_a_named_error_naming_the_field(raw, field):
    def respond(handler, request):
        send(handler, 200, raw=raw.encode())

    with Server(respond) as server:
        with pytest.raises(JudgeServerAnswerError) as info:
            ask(server.api_base, logprobs=True)
    error = info.value
    assert error.field == field
    assert f"answered with {field} " in str(error) or field == "body"
    assert isinstance(error, JudgeServerHTTPError) and isinstance(error, JudgeServerError)
    assert "OpenAI-compatible server's /v1" in str(error)  # what to check
    assert error.__cause__ is None and error.__suppress_context__


def test_a_body_over_the_size_limit_is_a_named_error(monkeypatch):
    monkeypatch.setattr(client_module, "BODY_LIMIT", 2000)
    big = json.dumps(chat_answer("x" * 5000)).encode()

    def declared(handler, request):
        send(handler, 200, raw=big)

    def undeclared(handler, request):  # no Content-Length: read until the limit, no further
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        handler.wfile.write(big)
        handler.close_connection = True

    for respond in (declared, undeclared):
        with Server(respond) as server:
            with pytest.raises(JudgeServerAnswerTooLarge, match="more than 2,000 bytes") as info:
                ask(server.api_base)
        assert info.value.field == "body" and isinstance(info.value, JudgeServerAnswerError)


# -- the answer cache --------------------------------------------------------------------------------------


def test_logprobs_of_the_wrong_shape_are_never_cached(tmp_path):
    broken = {"on": True}

    def respond(handler, request):
        answer = judge_answer(request["body"])
        if broken["on"] and request["body"].get("logprobs"):
            answer["choices"][0]["logprobs"] = {"content": [["4", -0.5]]}
        send(handler, 200, answer)

    cache = tmp_path / "cache"
    with Server(respond) as server:
        with pytest.raises(JudgeServerAnswerError, match=r"choices\[0\]\.logprobs\.content\[0\]"):
            make_judge(server.api_base, cache).judge("Thanks a lot!", CRITERION)
        # only the steps (asked without log-probabilities) are cached; the unreadable answer is not
        assert len(cached_files(cache)) == 1
        broken["on"] = False  # the server is fixed: the answer is asked again, not replayed
        asked = len(server.requests)
        judgment = make_judge(server.api_base, cache).judge("Thanks a lot!", CRITERION)
        assert judgment.value == pytest.approx(WEIGHTED) and len(server.requests) == asked + 1


def test_empty_choices_while_generating_the_steps_is_a_server_error_and_nothing_is_cached(tmp_path):
    broken = {"on": True}

    def respond(handler, request):
        if broken["on"]:
            send(handler, 200, {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 0}})
        else:
            answering(handler, request)

    with Server(respond) as server:
        with pytest.raises(JudgeServerAnswerError, match="choices that is an empty list"):
            make_judge(server.api_base, tmp_path / "a").score("Thanks a lot!", CRITERION, recorder=None)
        assert cached_files(tmp_path / "a") == []
        broken["on"] = False
        fixed = make_judge(server.api_base, tmp_path / "a").score("Thanks a lot!", CRITERION, recorder=None)
        clean = make_judge(server.api_base, tmp_path / "b").score("Thanks a lot!", CRITERION, recorder=None)
    assert fixed.evaluator_id == clean.evaluator_id
    assert fixed.details["steps"] == ["Read the reply.", "Judge its tone."]


def _edit_entries(cache, how: str) -> int:
    """Spoil the cached entries as ``how`` says; the number of entries spoiled."""
    spoiled = 0
    for path in cached_files(cache):
        blob = path.read_bytes()
        entry = json.loads(blob)
        if how == "truncated":
            path.write_bytes(blob[: len(blob) // 2])
        elif how == "binary":
            path.write_bytes(b"\x00\x9f\xff\xfe" + os.urandom(32))
        elif how == "text a number":
            entry["outputs"] = [4 if isinstance(o, str) else {**o, "text": 4} for o in entry["outputs"]]
            path.write_text(json.dumps(entry))
        elif isinstance(entry["outputs"][0], dict):  # only answers with log-probabilities
            entry["outputs"][0]["logprobs"] = "lots" if how == "logprobs a string" else {"content": 5}
            path.write_text(json.dumps(entry))
        else:
            continue
        spoiled += 1
    return spoiled


@pytest.mark.parametrize(
    "how", ["truncated", "binary", "logprobs a string", "logprobs content a number", "text a number"]
)
def test_an_unreadable_cache_entry_is_set_aside_with_a_warning_and_asked_again(tmp_path, how):
    from pytest_nlgeval.core.cache import CacheWarning

    cache = tmp_path / "cache"
    with Server(answering) as server:
        first = make_judge(server.api_base, cache).judge("Thanks a lot!", CRITERION)
        asked = len(server.requests)
        spoiled = _edit_entries(cache, how)
        assert spoiled >= 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again = make_judge(server.api_base, cache).judge("Thanks a lot!", CRITERION)
        assert len(server.requests) == asked + spoiled  # each spoiled entry asked again, the others not
        notes = [w for w in caught if issubclass(w.category, CacheWarning)]
        assert len(notes) == spoiled, [str(w.message) for w in caught]
        assert all("not an answer this cache writes" in str(w.message) for w in notes)
        assert all("set aside as" in str(w.message) for w in notes)
        assert len(list(cache.rglob("*.corrupt-*"))) == spoiled
        # the answers asked again are cached: a third run sends nothing
        third = make_judge(server.api_base, cache).judge("Thanks a lot!", CRITERION)
        assert len(server.requests) == asked + spoiled
    assert again.value == first.value == third.value == pytest.approx(WEIGHTED)


def _blocked_by_a_file(tmp_path, monkeypatch):
    (tmp_path / "not-a-folder").write_text("a file where the cache folder should be")
    return tmp_path / "not-a-folder" / "llm"


def _full_disk(tmp_path, monkeypatch):
    from pytest_nlgeval.llm.cache import _DiskStore

    def no_space(self, path, blob):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_DiskStore, "_write", no_space)
    return tmp_path / "cache"


def _read_only(tmp_path, monkeypatch):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


@pytest.mark.parametrize("folder", [_blocked_by_a_file, _full_disk, _read_only], ids=["file", "full", "read-only"])
def test_a_cache_folder_that_cannot_be_written_warns_once_and_the_check_is_judged(tmp_path, monkeypatch, folder):
    from pytest_nlgeval.core.cache import CacheWarning

    cache = folder(tmp_path, monkeypatch)
    try:
        with Server(answering) as server:
            judge = make_judge(server.api_base, cache)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                score = judge.score("Thanks a lot!", CRITERION, recorder=None)
                again = judge.score("Thanks a lot!", CRITERION, recorder=None)
            notes = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
            assert len(notes) == 1 and "cannot be written" in notes[0] and "still judged" in notes[0], notes
            assert float(score) == float(again) == pytest.approx(WEIGHTED)
            assert len(server.requests) == 2  # the steps and one answer: the second check from memory
    finally:
        if cache.exists():
            cache.chmod(0o755)


# -- reading by completion: the same rules on /completions -------------------------------------------------


def completion_answer(logprobs) -> dict:
    return {"choices": [{"index": 0, "text": "4", "logprobs": logprobs}], "usage": {"prompt_tokens": 9}}


COMPLETION_LOGPROBS = {
    "content": [
        {"token": "4", "logprob": math.log(P4), "top_logprobs": [
            {"token": "4", "logprob": math.log(P4)}, {"token": "3", "logprob": math.log(P3)}]}
    ]
}  # fmt: skip


def test_a_completion_of_the_wrong_shape_is_a_named_error_and_a_spoiled_one_is_set_aside(tmp_path):
    from pytest_nlgeval.core.cache import CacheWarning

    broken = {"on": True}

    def respond(handler, request):
        if request["path"].endswith("/completions") and not request["path"].endswith("/chat/completions"):
            logprobs = "lots" if broken["on"] else COMPLETION_LOGPROBS
            send(handler, 200, completion_answer(logprobs))
        else:
            answering(handler, request)

    cache = tmp_path / "cache"
    with Server(respond) as server:
        with pytest.raises(JudgeServerAnswerError, match=r"/completions answered with choices\[0\]\.logprobs"):
            make_judge(server.api_base, cache, read="completion").judge("Thanks a lot!", CRITERION)
        assert len(cached_files(cache)) == 1  # the steps only
        broken["on"] = False
        first = make_judge(server.api_base, cache, read="completion").judge("Thanks a lot!", CRITERION)
        assert first.method == "completion" and first.value == pytest.approx(WEIGHTED)
        for path in cached_files(cache):
            entry = json.loads(path.read_text())
            if "logprobs" in entry:
                path.write_text(json.dumps({"logprobs": {"content": 5}}))
        asked = len(server.requests)
        with pytest.warns(CacheWarning, match="not an answer this cache writes"):
            again = make_judge(server.api_base, cache, read="completion").judge("Thanks a lot!", CRITERION)
        assert again.value == first.value and len(server.requests) == asked + 1


# -- nlgeval judge --judge-read ----------------------------------------------------------------------------


def test_the_judge_command_reads_the_scale_as_the_plugin_does(tmp_path, capsys):
    from pytest_nlgeval.cli import main
    from pytest_nlgeval.commands.judge import READ_MODES
    from pytest_nlgeval.judges.criterion import READ_MODES as PLUGIN_READ_MODES

    assert READ_MODES == PLUGIN_READ_MODES

    def base_model(handler, request):
        if request["path"] == "/v1/completions":
            send(handler, 200, completion_answer(COMPLETION_LOGPROBS))
        elif "numbered steps" in request["body"]["messages"][-1]["content"]:
            answering(handler, request)
        else:  # a base model continues the prompt instead of filling the form
            send(handler, 200, chat_answer(" and then the output goes on and on"))

    data = tmp_path / "answers.jsonl"
    data.write_text(json.dumps({"output": "Thanks a lot!"}) + "\n" + json.dumps({"output": "Go away."}) + "\n")
    args = ["judge", str(data), "--criterion", CRITERION, "--lm", "openai/base", "--cache-dir", str(tmp_path / "c")]
    with Server(base_model) as server:
        args += ["--api-base", server.api_base, "--json", str(tmp_path / "out.json")]
        assert main(args) == 1  # the form: no score in a base model's prose
        assert "2 parse failures" in capsys.readouterr().out
        assert main([*args, "--judge-read", "completion"]) == 0
    report = json.loads((tmp_path / "out.json").read_text())
    assert [r["method"] for r in report["rows"]] == ["completion", "completion"]
    assert [r["score"] for r in report["rows"]] == [pytest.approx(WEIGHTED)] * 2
    assert report["judge"]["read"] == "completion"
    with pytest.raises(SystemExit) as info:
        main([*args, "--judge-read", "prose"])
    assert info.value.code == 2
    assert "invalid choice: 'prose'" in capsys.readouterr().err
