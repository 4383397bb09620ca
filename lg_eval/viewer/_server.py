"""The viewer's HTTP server: the standard library's threading server, local, read-only but
for one form.

``GET`` and ``HEAD`` read. The one write is ``POST /label``, the case page's label form;
any other method, or a POST to any other path, is 405. Every response carries a
Content-Security-Policy that allows the viewer's own stylesheet and nothing else (no
script at all, no frame, no form sent anywhere but the viewer), ``nosniff``, no referrer
and no caching. A request whose ``Host`` is not the address the server is bound to is
refused (421): a page elsewhere cannot reach the viewer through a DNS name it controls
(DNS rebinding).

A label is written only when every one of these holds, else 403 (or 400/411/413/415 for a
malformed body) and nothing is written:

* the viewer is bound to a loopback address and the request comes from one (bound
  elsewhere, the viewer renders no form and writes nothing);
* the form carries the session's token: a random value made when the server starts, in
  the forms the viewer renders, which a page of another origin cannot read;
* the browser says the request is same-origin: ``Sec-Fetch-Site``, when sent, is
  ``same-origin``, and ``Origin``, when sent with an origin, is the viewer's;
* the body is a urlencoded form of at most :data:`MAX_FORM` bytes.

A written label answers 303 back to the case page (post/redirect/get).
"""

from __future__ import annotations

import getpass
import hmac
import ipaddress
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from lg_eval._describe import safe_text
from lg_eval._visible import visible
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
LABEL_PATH = "/label"
"""The one path that takes a POST: the case page's label form."""
MAX_FORM = 32 * 1024
"""The largest label form body, in bytes."""
FORM = "application/x-www-form-urlencoded"


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
        self.close_connection = True  # its body, if any, is never read
        self.send_error(405, "The viewer is read-only but for its label form: GET and HEAD only.")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    def do_POST(self) -> None:
        """The label form: written only after every check of the module's docstring."""
        self.close_connection = True  # a refused body is never read: no reuse of the socket
        if self.headers.get("Host", "") not in self.server.hosts:
            self._send(Page(421, b"Unknown host.\n", "text/plain; charset=utf-8"), True)
            return
        if urlsplit(self.path).path != LABEL_PATH:
            self.send_error(405, f"The viewer is read-only but for its label form ({LABEL_PATH}).")
            return
        status, problem, form = self._form()
        if form is None:
            self._send(Page(status, f"{problem}\n".encode(), "text/plain; charset=utf-8"), True)
            return
        try:
            page = self.server.pages.label(form)
        except LgEvalError as exc:  # the store refused the write
            self.log_error("%s on %s", type(exc).__name__, LABEL_PATH)
            said = visible(safe_text(exc))
            page = Page(500, f"The label was not written: {said}\n".encode(), "text/plain")
        self._send(page, True)

    def _form(self) -> tuple[int, str, dict[str, str] | None]:
        """The label form's fields, or the status and reason it is refused."""
        if self.server.token is None or not _loopback(self.client_address[0]):
            return 403, "Labels are written only from this machine, to a viewer bound to it.", None
        fetch_site = self.headers.get("Sec-Fetch-Site")
        origin = self.headers.get("Origin")
        own = f"http://{self.headers.get('Host', '')}"
        if (fetch_site is not None and fetch_site != "same-origin") or (
            origin not in (None, "null") and origin != own
        ):
            return 403, "A label form is taken only from the viewer's own pages.", None
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != FORM:
            return 415, f"A label form is {FORM}.", None
        length = self.headers.get("Content-Length", "")
        if not length.isdigit():
            return 411, "A label form states its Content-Length.", None
        if int(length) > MAX_FORM:
            return 413, f"A label form is at most {MAX_FORM} bytes.", None
        try:
            text = self.rfile.read(int(length)).decode("utf-8")
            fields = parse_qsl(text, keep_blank_values=True, strict_parsing=True, max_num_fields=16)
        except (UnicodeDecodeError, ValueError):
            return 400, "The label form does not read as a form.", None
        form = dict(fields)
        if len(form) != len(fields):
            return 400, "A field of the label form is given twice.", None
        if not hmac.compare_digest(form.pop("token", "").encode(), self.server.token.encode()):
            return 403, "The label form's token is missing or not this session's.", None
        return 200, "", form

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
        if page.location is not None:
            self.send_header("Location", page.location)
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


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:  # a name: only localhost is this machine
        return address == "localhost"


def default_labeler() -> str:
    """Who labels through the viewer unless told: the user running it."""
    try:
        return getpass.getuser() or "viewer"
    except (OSError, KeyError):  # no user name in this environment
        return "viewer"


class ViewerServer(ThreadingHTTPServer):
    """The viewer bound to ``(host, port)`` (port 0: any free port; see :attr:`url`).

    Bound to a loopback address it makes the session's token (:attr:`token`) and its pages
    carry the label form; bound elsewhere it has no token and writes nothing.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, pages: Pages, host: str = "127.0.0.1", port: int = 0, *, log: bool = False):
        super().__init__((host, port), _Handler)
        self.pages, self.log = pages, log
        bound = self.server_address[1]
        names = {host, "localhost", "127.0.0.1"} if host in ("127.0.0.1", "localhost") else {host}
        self.hosts: frozenset[str] = frozenset(f"{name}:{bound}" for name in names)
        self.token: str | None = secrets.token_urlsafe(32) if _loopback(host) else None
        """The session's label-form token (None: bound off this machine, no form)."""
        pages.token = self.token

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
