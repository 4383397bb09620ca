"""A "LangGraph Server" that is not one (#40 item 6): what answers at ``--server`` may be a
login page behind a proxy, a redirect to one, or another API. ``run --server`` and
``sweep --server`` against a real loopback HTTP server give one line naming the URL and the
request, exit 2, never a traceback; a redirect is not followed (the key would go with it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lg_eval.cli._common import INPUT_ERROR
from tests.security.conftest import WEATHER, invoke, squash

KEY = "lsv2_sk_serverkey0123456789"


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request as its server's ``mode`` says; counts the requests."""

    server: _Loopback

    def _answer(self) -> None:
        self.server.requests.append(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        status, headers, body = self.server.answer(self.server)
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Loopback(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer: object) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.answer = answer
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def serve() -> Iterator[object]:
    started: list[_Loopback] = []

    def start(answer: object) -> _Loopback:
        server = _Loopback(answer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def _json(value: object) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(value).encode()


ANSWERS = {
    "an HTML login page": (
        lambda _: (200, {"Content-Type": "text/html"}, b"<html>Sign in\x1b[2J</html>"),
        "it answered with an HTML page",
    ),
    "text that is not JSON": (
        lambda _: (200, {"Content-Type": "application/json"}, b"Sign in \x1b[2J please"),
        "is not JSON",
    ),
    "an object where a list is expected": (
        lambda _: _json({"detail": "ok", "items": []}),
        "with a JSON object where a list of objects was expected",
    ),
    "a list of numbers": (
        lambda _: _json([1, 2, 3]),
        "with a JSON list of non-objects where a list of objects was expected",
    ),
}


def _commands(url: str, store: str) -> dict[str, tuple[tuple[str, ...], str]]:
    return {
        "run": (
            ("run", str(WEATHER), "--server", url, "--assistant", "agent", "--api-key", KEY,
             "--store", store, "--quiet"),
            "the assistants of graph 'agent'",
        ),
        "sweep": (
            ("sweep", "--server", url, "--api-key", KEY, "--store", store, "--quiet"),
            "threads.search (offset 0)",
        ),
    }  # fmt: skip


@pytest.mark.parametrize("answer", list(ANSWERS))
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_server_that_is_not_a_langgraph_server_is_one_line(
    here: dict[str, str], serve: object, answer: str, command: str
) -> None:
    respond, problem = ANSWERS[answer]
    server = serve(respond)  # type: ignore[operator]
    args, what = _commands(server.url, here["store"])[command]
    result = invoke(*args)
    assert result.exit_code == INPUT_ERROR, result.output
    assert squash(result.stderr).startswith(
        squash(f"lg-eval: What answers at {server.url} is not a LangGraph Server:")
    ), result.stderr
    assert squash(what) in squash(result.stderr) and squash(problem) in squash(result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert KEY not in result.output and "\x1b" not in result.output
    assert server.requests  # a real request was answered


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_redirect_is_refused_and_not_followed(
    here: dict[str, str], serve: object, command: str
) -> None:
    elsewhere = serve(lambda _: _json([]))  # type: ignore[operator]
    redirecting = serve(  # type: ignore[operator]
        lambda _: (302, {"Location": f"{elsewhere.url}/login"}, b"")
    )
    args, what = _commands(redirecting.url, here["store"])[command]
    result = invoke(*args)
    assert result.exit_code == INPUT_ERROR, result.output
    assert squash(f"for {what} it redirected (HTTP 302), which lg_eval does not follow") in squash(
        result.stderr
    )
    assert elsewhere.requests == []  # the key never went where the redirect pointed
    assert KEY not in result.output and "Traceback" not in result.output
