"""The viewer's HTTP server: the standard library's threading server, read-only, local.

Only ``GET`` and ``HEAD`` are answered (anything else is 405). Every response carries
a Content-Security-Policy that allows the viewer's own stylesheet and nothing else (no
script at all, no frame, no form sent anywhere but the viewer), ``nosniff``, no
referrer and no caching. A request whose ``Host`` is not the address the server is
bound to is refused (421): a page elsewhere cannot reach the viewer through a DNS name
it controls (DNS rebinding).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from lg_eval._visible import visible
from lg_eval.describe import safe_text
from lg_eval.errors import LgEvalError
from lg_eval.viewer._pages import Page, Pages

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"
    error_content_type = "text/plain; charset=utf-8"
    error_message_format = "%(code)d %(message)s\n"

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _refuse(self) -> None:
        self.send_error(405, "The viewer is read-only: GET and HEAD only.")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    def _answer(self, *, body: bool) -> None:
        if self.headers.get("Host", "") not in self.server.hosts:
            self._send(Page(421, b"Unknown host.\n", "text/plain; charset=utf-8"), body)
            return
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            page = self.server.pages.respond(url.path, query)
        except LgEvalError as exc:  # a row that does not read: the store's one line says which
            self.log_error("%s on %s", type(exc).__name__, url.path)
            said = visible(safe_text(exc))
            page = Page(500, f"The viewer failed: {said}\n".encode(), "text/plain; charset=utf-8")
        except Exception as exc:  # a broken row must not take the viewer down
            self.log_error("%s on %s", type(exc).__name__, url.path)
            page = Page(500, f"The viewer failed: {type(exc).__name__}.\n".encode(), "text/plain")
        self._send(page, body)

    def _send(self, page: Page, body: bool) -> None:
        self.send_response(page.status)
        self.send_header("Content-Type", page.content_type)
        self.send_header("Content-Length", str(len(page.body)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(page.body)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log:
            super().log_message(format, *args)


class ViewerServer(ThreadingHTTPServer):
    """The viewer bound to ``(host, port)`` (port 0: any free port; see :attr:`url`)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, pages: Pages, host: str = "127.0.0.1", port: int = 0, *, log: bool = False):
        super().__init__((host, port), _Handler)
        self.pages, self.log = pages, log
        bound = self.server_address[1]
        names = {host, "localhost", "127.0.0.1"} if host in ("127.0.0.1", "localhost") else {host}
        self.hosts: frozenset[str] = frozenset(f"{name}:{bound}" for name in names)

    @property
    def url(self) -> str:
        """Where the viewer answers."""
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}/"

    def start(self) -> threading.Thread:
        """Serve in a background thread (stop with :meth:`stop`)."""
        thread = threading.Thread(target=self.serve_forever, name="lg-eval-view", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()

    def server_close(self) -> None:
        """Close the socket and the connections the pages opened."""
        super().server_close()
        pages = getattr(self, "pages", None)  # None: the address could not be bound
        if pages is not None:
            pages.close()
