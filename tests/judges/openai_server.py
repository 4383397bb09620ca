"""An OpenAI-compatible chat-completions server on 127.0.0.1, scripted and recording.

:class:`ChatServer` answers each ``POST /v1/chat/completions`` with the next
:class:`Reply` of its script (a completion, an HTTP error with headers, or either
after a stall) and records every request it received: path, headers, JSON body
and arrival time. Point ``langchain_openai.ChatOpenAI`` (or an ``openai`` client)
at :attr:`ChatServer.base_url` with a dummy key, and the judge runs through the
real provider client, HTTP and all, without leaving the machine.

:func:`loopback_only` fails any socket connection or DNS lookup to another host
while it is active, so a test proves that nothing else reached the network.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DUMMY_KEY = "sk-test-not-a-real-key"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """What the server answers one request with."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stall: float = 0.0
    """Seconds to wait before answering (cut short when the server closes)."""


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


def usage(
    prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0, **extra: Any
) -> dict[str, Any]:
    """A chat-completions ``usage`` object; ``extra`` adds fields such as ``cost``."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
        **extra,
    }


def completion(
    message: dict[str, Any], *, model: str, tokens: dict[str, Any] | None = None
) -> Reply:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    body: dict[str, Any] = {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": tokens or usage(10, 5),
    }
    return Reply(body)


def tool_answer(
    name: str, arguments: str, *, model: str, tokens: dict[str, Any] | None = None
) -> Reply:
    """A completion calling the tool ``name`` with ``arguments`` (raw JSON text, as sent)."""
    call = {
        "id": f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return completion(message, model=model, tokens=tokens)


def text_answer(content: str, *, model: str, tokens: dict[str, Any] | None = None) -> Reply:
    """A completion answering in plain text (a ``json_schema`` answer is such a text)."""
    return completion({"role": "assistant", "content": content}, model=model, tokens=tokens)


def error(status: int, message: str, **headers: str) -> Reply:
    """An OpenAI-style error response; ``retry_after="2"`` becomes a ``Retry-After`` header."""
    named = {key.replace("_", "-"): value for key, value in headers.items()}
    kind = "rate_limit_exceeded" if status == 429 else "server_error"
    return Reply({"error": {"message": message, "type": kind, "code": None}}, status, named)


class ChatServer:
    """The scripted server; use it as a context manager (it listens on a free port)."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [request.body for request in self.received]

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _take(self, request: Received) -> Reply:
        with self._lock:
            index = len(self.received)
            self.received.append(request)
        if index >= len(self.replies):
            return error(500, f"script exhausted: request {index + 1} has no reply")
        return self.replies[index]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                request = Received(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(raw or b"{}"),
                    at=time.monotonic(),
                )
                reply = server._take(request)
                if reply.stall and server._closing.wait(reply.stall):
                    return
                payload = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout) and closed the connection
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


_installed = False
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in ("socket.connect", "socket.getaddrinfo") or not _active():
        return
    address = args[1] if event == "socket.connect" else (args[0],)
    if not isinstance(address, tuple):  # a Unix socket's path
        return
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, str) and host not in _LOOPBACK:
        raise ConnectionRefusedError(f"network access outside 127.0.0.1 in a test: {host!r}")


_ACTIVE = {"count": 0}


def _active() -> bool:
    return _ACTIVE["count"] > 0


@contextmanager
def loopback_only() -> Iterator[None]:
    """Refuse every connection and lookup to a host other than 127.0.0.1 while active."""
    global _installed
    if not _installed:
        sys.addaudithook(_audit)  # audit hooks cannot be removed: it checks a flag
        _installed = True
    _ACTIVE["count"] += 1
    try:
        yield
    finally:
        _ACTIVE["count"] -= 1
