"""No secret of the judge reaches an artifact: the API key, credentials in the API base, a key in its query.

A judged suite runs against a stand-in server that fails (HTTP 500, 401, an answer that is not JSON) and one
that answers, with the key in the environment, pytest's longest tracebacks (``--tb=long --showlocals``), a
JUnit XML file, the results JSON, the HTML report and a baseline; every file the run writes is read back and
searched for the key and the password.
"""

from __future__ import annotations

import textwrap
import warnings

import pytest
from openai_stub import OpenAIStub

from pytest_nlgeval.llm.client import OpenAIClient, post_json
from pytest_nlgeval.llm.errors import JudgeServerError, JudgeServerHTTPError
from pytest_nlgeval.llm.secrets import (
    KeyInClearTextWarning,
    Secret,
    judge_api_key,
    key_in_clear_text,
    public_url,
    warn_if_key_in_clear_text,
)

KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"
PASSWORD = "hunter2-b7e1"

SUITE = """
    from pytest_nlgeval import assert_judged

    def test_judged():
        assert assert_judged("answer with quality 4: hold the button", "The answer is helpful.") >= 3
"""


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test sees the once-per-server warning afresh."""
    from pytest_nlgeval.llm import secrets

    monkeypatch.setattr(secrets, "_warned", set())


def cooperative(request):
    """A judge that writes its steps and the score 4."""
    prompt = request["messages"][-1]["content"]
    if "numbered steps" in prompt:
        return "1. Read the answer.\n2. Judge how helpful it is.", None
    return "Score: 4\nReason: it says what to do.", None


def written_files(root):
    """Every file under ``root`` as text (binary files decoded with replacement)."""
    return {p: p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()}


def run_judged(pytester, api_base, *extra):
    pytester.makepyfile(test_suite=textwrap.dedent(SUITE))
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--tb=long",
        "--showlocals",
        "--nlgeval-judge-lm",
        "openai/stub",
        "--nlgeval-judge-api-base",
        api_base,
        "--nlgeval-judge-timeout",
        "5",
        "--junitxml",
        str(pytester.path / "junit.xml"),
        "--nlgeval-json",
        str(pytester.path / "results.json"),
        *extra,
    )


@pytest.mark.parametrize("mode", ["error", "unauthorized", "not json", "echo"])
def test_a_failing_judged_run_writes_the_key_nowhere(pytester, monkeypatch, mode):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAIStub(mode="error") if mode == "error" else _FailingServer(mode) as server:
        result = run_judged(pytester, server.api_base, "--nlgeval-report", str(pytester.path / "report.html"))
    result.assert_outcomes(failed=1)
    text = result.stdout.str() + result.stderr.str()
    assert "JudgeServer" in text  # the failure is reported, with the tracebacks pytest shows at their longest
    assert KEY not in text
    files = written_files(pytester.path)
    assert (pytester.path / "junit.xml") in files
    for path, content in files.items():
        assert KEY not in content, f"{path.name} holds the API key"


def test_credentials_in_the_api_base_are_stored_nowhere(pytester, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIStub(mode="rule", responder=cooperative) as server:
        base = server.api_base.replace("http://", f"http://ann:{PASSWORD}@")
        baseline = pytester.path / "baseline.json"
        result = run_judged(
            pytester,
            base,
            "--nlgeval-report",
            str(pytester.path / "report.html"),
            "--nlgeval-baseline",
            str(baseline),
            "--nlgeval-baseline-update",
        )
    result.assert_outcomes(passed=1)
    assert server.requests >= 1
    files = written_files(pytester.path)
    assert baseline in files and (pytester.path / "report.html") in files
    assert server.api_base in files[pytester.path / "results.json"]  # the address itself is kept
    for path, content in files.items():
        assert PASSWORD not in content, f"{path.name} holds the password of the API base"


def test_the_api_base_is_stored_without_credentials_or_query():
    assert public_url("http://ann:pw@judge.lan:8080/v1?api-key=sk-1#frag") == "http://judge.lan:8080/v1"
    assert public_url("https://judge.example/v1") == "https://judge.example/v1"
    assert public_url("http://ann:pw@host:notaport/v1?k=1") == "http://host:notaport/v1"
    assert public_url(None) is None
    client = OpenAIClient("openai/x", api_base="http://ann:pw@127.0.0.1:9/v1?key=sk-q")
    assert "pw" not in repr(client) and "sk-q" not in repr(client)
    from pytest_nlgeval.llm.cache import lm_identity

    assert lm_identity(client)["params"]["api_base"] == "http://127.0.0.1:9/v1"
    error = JudgeServerHTTPError("openai/x", "http://ann:pw@127.0.0.1:9/v1?key=sk-q", "HTTP 500")
    assert "pw" not in str(error) and "sk-q" not in str(error) and error.api_base == "http://127.0.0.1:9/v1"


def test_the_key_is_masked_in_every_repr_but_sent_as_it_is():
    key = Secret(KEY)
    assert KEY not in repr(key) and KEY not in repr({"api_key": key}) and key == KEY
    assert "Bearer " + key == "Bearer " + KEY
    import pickle

    again = pickle.loads(pickle.dumps(key))
    assert again == KEY and KEY not in repr(again)
    client = OpenAIClient("openai/x", api_base="http://127.0.0.1:9/v1", api_key=KEY)
    assert KEY not in repr(client.kwargs)


def test_post_json_frames_hold_the_key_masked(monkeypatch):
    """What pytest's long traceback prints is each frame's arguments and locals by their repr."""
    import sys

    seen: list[str] = []

    def spy(url, data, headers, deadline, limit):
        frame = sys._getframe(1)  # post_json's frame
        seen.append(repr(frame.f_locals) + repr(headers))
        raise JudgeServerHTTPError("openai/x", "http://127.0.0.1:9/v1", "stop")

    from pytest_nlgeval.llm import client as client_module

    monkeypatch.setattr(client_module, "_exchange", spy)
    with pytest.raises(JudgeServerError):
        post_json(
            "http://127.0.0.1:9/v1/chat/completions",
            {},
            api_key=KEY,
            timeout=1,
            model="openai/x",
            api_base="http://127.0.0.1:9/v1",
        )
    assert seen and KEY not in seen[0] and "<secret hidden>" in seen[0]


def test_a_key_over_plain_http_to_another_host_warns_once():
    assert key_in_clear_text("http://192.0.2.7:8080/v1", KEY)
    assert key_in_clear_text("http://judge.lan/v1", KEY)
    assert not key_in_clear_text("https://judge.lan/v1", KEY)
    assert not key_in_clear_text("http://127.0.0.1:8080/v1", KEY)
    assert not key_in_clear_text("http://localhost:8080/v1", KEY)
    assert not key_in_clear_text("http://[::1]:8080/v1", KEY)
    assert not key_in_clear_text("http://judge.lan/v1", "no-key")
    assert not key_in_clear_text("http://judge.lan/v1", None)
    with pytest.warns(KeyInClearTextWarning, match=r"http://198\.51\.100\.3:8080/v1") as caught:
        warn_if_key_in_clear_text("http://ann:pw@198.51.100.3:8080/v1", KEY)
    assert KEY not in str(caught[0].message) and "pw" not in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_key_in_clear_text("http://198.51.100.3:8080/v1", KEY)  # once per server


def test_a_judge_request_over_plain_http_with_a_key_warns(monkeypatch):
    from pytest_nlgeval.llm import client as client_module

    monkeypatch.setattr(client_module, "_exchange", lambda *a: (200, {}, b'{"choices": []}'))
    client = OpenAIClient("openai/x", api_base="http://203.0.113.9:8080/v1", api_key=KEY)
    with pytest.warns(KeyInClearTextWarning):
        with pytest.raises(JudgeServerError):
            client(messages=[{"role": "user", "content": "hi"}])


def test_the_judge_key_variable_comes_before_openais():
    assert judge_api_key({"OPENAI_API_KEY": "a", "NLGEVAL_JUDGE_API_KEY": "b"}) == "b"
    assert judge_api_key({"OPENAI_API_KEY": "a"}) == "a"
    assert judge_api_key({}) is None
    assert isinstance(judge_api_key({"OPENAI_API_KEY": "a"}), Secret)


class _FailingServer:
    """A loopback server that answers every request with HTTP 401, a 200 that is not JSON, or a 502 page that
    echoes the request's headers."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __enter__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        mode = self.mode

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if mode == "echo":  # an error page that shows the request's headers back
                    status, blob = 502, f"bad gateway; you sent {dict(self.headers)}".encode()
                elif mode == "unauthorized":
                    status, blob = 401, b'{"error": "bad key"}'
                else:
                    status, blob = 200, b"<html>hi</html>"
                self.send_response(status)
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.api_base = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
