"""A real HTTP proxy on 127.0.0.1 in front of a LangGraph Server, that can fail on cue.

The failure tests talk to the server through it, so lg_eval's client sees real HTTP
answers (a 401 with a body, a 503 with ``Retry-After``, a reply that never comes) and not
a mock of the client. ``answer`` decides, per request (numbered from 1), whether to
forward it upstream or answer it itself; every request is counted, with its headers.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Reply:
    """What the proxy answers instead of forwarding: a status, headers, and a delay first."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Answer = Callable[[int, str, str], Reply | None]
"""``answer(number, method, path)``: a :class:`Reply`, or None to forward upstream."""


def forward(number: int, method: str, path: str) -> Reply | None:
    """Forward every request."""
    return None


@dataclass
class Proxy:
    """The running proxy: its URL, the answer policy (replaceable), what it has seen."""

    url: str
    answer: Answer = forward
    latency: float = 0.0
    """Seconds added before each forwarded request (a server farther away than loopback)."""
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, method: str, path: str, headers: dict[str, str]) -> int:
        with self.lock:
            self.seen.append((method, path, headers))
            return len(self.seen)


def _handler(upstream: str, proxy: Proxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the tests read ``proxy.seen`` instead."""

        def _any(self) -> None:
            # the client may give up first (a timeout test): nothing left to answer then
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._relay()

        def _relay(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            number = proxy.count(self.command, self.path, headers)
            reply = proxy.answer(number, self.command, self.path)
            if reply is not None:
                time.sleep(reply.delay)
                payload = b'{"detail": "from the test proxy"}'
                self.send_response(reply.status)
                for name, value in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            time.sleep(proxy.latency)
            sent = {k: v for k, v in headers.items() if k not in {"host", "content-length"}}
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
            try:
                connection.request(self.command, self.path, body=body or None, headers=sent)
                response = connection.getresponse()
                data = response.read()
            finally:
                connection.close()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in {"content-length", "transfer-encoding", "connection"}:
                    self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

    return Handler


@contextmanager
def proxying(upstream: str) -> Iterator[Proxy]:
    """A proxy to ``upstream`` on a free 127.0.0.1 port until the context ends."""
    proxy = Proxy(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(upstream, proxy))
    server.daemon_threads = True
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
