"""A small OpenAI-compatible HTTP server on a free loopback port, for the tests of judges over HTTP.

It answers ``POST /v1/chat/completions`` the way the chosen mode says: ``rule`` answers with
:class:`induction_fakes.RuleLM` (a cooperative judge, with an unparseable answer for outputs marked
UNPARSEABLE) or with a ``responder`` function that sees the request (and may return log-probabilities),
``error`` answers HTTP 500, ``slow`` waits ``delay`` seconds before answering. Every request is
counted, so a test can tell what reached the server and what the disk cache answered.

    with OpenAIStub(mode="rule") as server:
        run(["induce", ..., "--lm", "openai/rule", "--api-base", server.api_base])
        server.requests   # chat completions received
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class OpenAIStub:
    def __init__(self, mode: str = "rule", delay: float = 30.0, responder=None) -> None:
        self.mode = mode
        self.delay = delay
        #: ``responder(request) -> (content, logprobs or None)`` answers instead of RuleLM when given
        self.responder = responder
        self.bodies: list[dict] = []
        self.requests = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "OpenAIStub":
        from induction_fakes import RuleLM

        stub = self
        judge = RuleLM()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output clean
                pass

            def _send(self, status: int, body: dict) -> None:
                blob = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(blob)))
                    self.end_headers()
                    self.wfile.write(blob)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a time-out test)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with stub._lock:
                    stub.requests += 1
                    stub.bodies.append(request)
                if stub.mode == "error":
                    self._send(500, {"error": {"message": "the model crashed", "type": "server_error"}})
                    return
                if stub.mode == "slow":
                    stub._stop.wait(stub.delay)
                messages = request.get("messages") or []
                logprobs = None
                if stub.responder is not None:
                    content, logprobs = stub.responder(request)
                else:
                    content = judge.answer(messages[-1]["content"] if messages else "", {})
                choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                if logprobs is not None:
                    choice["logprobs"] = logprobs
                self._send(
                    200,
                    {
                        "id": f"stub-{stub.requests}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": request.get("model", "stub"),
                        "choices": [choice],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()  # release handlers still waiting in slow mode
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def free_port() -> int:
    """A loopback port that nothing listens on (bound and released)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
