"""How lg_eval talks to a LangGraph Server: one connection, typed errors, retries.

Every request goes through :func:`request`, an effect that performs one SDK call
(blocking or awaited) and maps what can go wrong to lg_eval's errors: a 404 to
:class:`~lg_eval.errors.ThreadNotFoundError`, 401/403 to
:class:`~lg_eval.errors.ServerAuthError`, and a refused connection, a timeout or a
429 or 5xx, after ``retries`` attempts with backoff (``Retry-After`` honoured), to
:class:`~lg_eval.errors.ServerError`. The API key never appears in a message or a
``repr``.

What answers at the URL may not be a LangGraph Server at all: a login page behind a
proxy, a redirect to one, another API. A redirect (never followed: it would take the key
elsewhere), an HTML page, a body that is not JSON, or JSON of another shape than the
request's (an object where a list is expected) is a :class:`ServerError` naming the URL
and the request, never a traceback from inside the SDK.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeVar

import httpx
import langgraph_sdk
import orjson
from langgraph_sdk import errors as sdk_errors
from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

from lg_eval._effects import Core, Effect, sleep
from lg_eval._urls import redact_url
from lg_eval.errors import InvalidOptionError, ServerAuthError, ServerError, ThreadNotFoundError
from lg_eval.server._retry import wait_before

T = TypeVar("T")
API_KEY_ENV = "LANGGRAPH_API_KEY"


@dataclass(frozen=True)
class ServerConnection:
    """A LangGraph Server: its URL, credentials and patience.

    ``api_key`` defaults to ``$LANGGRAPH_API_KEY``; ``headers`` are sent with every
    request (e.g. an ``Authorization`` header of a custom auth handler). Neither is shown
    by ``repr`` nor written anywhere by lg_eval.
    """

    url: str
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 0.5

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise InvalidOptionError(
                f"server url={self.url!r} is not an http(s) URL; pass the address the "
                "LangGraph Server listens on, e.g. 'http://127.0.0.1:2024'."
            )
        reserved = [name for name in self.headers if name.strip().lower() == "x-api-key"]
        if reserved:  # the header langgraph-sdk sends the key in: the key has one way in
            raise InvalidOptionError(
                f"headers={{{reserved[0]!r}: ...}}: the API key goes in api_key= (--api-key "
                f"or ${API_KEY_ENV} on the command line), not in a header."
            )
        if not isinstance(self.retries, int) or self.retries < 1:
            raise InvalidOptionError(f"retries={self.retries!r}: expected an int >= 1.")

    @property
    def shown(self) -> str:
        """The URL as messages and reports show it (any password in it replaced by ``***``)."""
        return redact_url(self.url)

    @property
    def _key(self) -> str | None:
        return self.api_key if self.api_key is not None else os.environ.get(API_KEY_ENV)

    def _options(self) -> dict[str, Any]:
        """The httpx client options both clients share: URL, timeout, and what every request
        carries (the SDK's user agent, ``headers``, the key)."""
        key = self._key
        sent = {"User-Agent": f"langgraph-sdk-py/{langgraph_sdk.__version__}", **self.headers}
        return {
            "base_url": self.url,
            "timeout": httpx.Timeout(self.timeout),
            "headers": {**sent, "x-api-key": key} if key else sent,
            "follow_redirects": False,
        }

    @cached_property
    def sync_client(self) -> Any:
        """The SDK's blocking client (made once per connection). Its transport does not
        retry a failed connect itself (the SDK's own does, 5 times): ``retries`` is the
        one bound. Each response is checked first: a redirect or an HTML page is refused."""
        transport = httpx.HTTPTransport(retries=0)
        hooks = {"response": [_refuse_foreign]}
        return SyncLangGraphClient(
            httpx.Client(transport=transport, event_hooks=hooks, **self._options())
        )

    @cached_property
    def async_client(self) -> Any:
        """The SDK's async client (made once per connection), retrying and checking
        responses as ``sync_client``."""
        transport = httpx.AsyncHTTPTransport(retries=0)
        hooks = {"response": [_arefuse_foreign]}
        return LangGraphClient(
            httpx.AsyncClient(transport=transport, event_hooks=hooks, **self._options())
        )


class _Foreign(Exception):
    """A response no LangGraph Server gives (raised from httpx's response hook)."""


def _not_a_server(response: httpx.Response) -> str | None:
    """What is wrong with ``response`` if it cannot come from a LangGraph Server: a redirect,
    or an HTML page; None when it may."""
    if response.is_redirect or 300 <= response.status_code < 400:
        return f"redirected (HTTP {response.status_code}), which lg_eval does not follow"
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if response.is_success and kind in ("text/html", "application/xhtml+xml"):
        return "answered with an HTML page"
    return None


def _refuse_foreign(response: httpx.Response) -> None:
    problem = _not_a_server(response)
    if problem is not None:
        raise _Foreign(problem)


async def _arefuse_foreign(response: httpx.Response) -> None:
    _refuse_foreign(response)


def _one(
    server: ServerConnection,
    run: Callable[[Any], T],
    arun: Callable[[Any], Awaitable[T]],
) -> Effect[T]:
    return Effect(lambda: run(server.sync_client), lambda: arun(server.async_client))


_RETRIED = (
    sdk_errors.APIConnectionError,
    sdk_errors.InternalServerError,
    sdk_errors.RateLimitError,
    httpx.TransportError,
)


def request(
    server: ServerConnection,
    what: str,
    run: Callable[[Any], T],
    arun: Callable[[Any], Awaitable[T]],
    *,
    thread_id: str | None = None,
    shape: Literal["list", "object"] | None = None,
) -> Core[T]:
    """Perform one SDK call (``run(sync_client)`` / ``await arun(async_client)``), retrying
    connection failures, timeouts, 429 and 5xx (waiting as ``Retry-After`` asks, else
    with exponential backoff: :mod:`lg_eval.server._retry`); ``what`` names the request
    in errors. ``shape``: what the answer must be, a list of objects or an object."""
    attempt = 0
    while True:
        attempt += 1
        try:
            result: T = yield _one(server, run, arun)
            _check_shape(server, what, result, shape)
            return result
        except _Foreign as exc:
            raise ServerError(
                f"What answers at {server.shown} is not a LangGraph Server: for {what} it "
                f"{exc}. Check the URL (a proxy or a login page in front of the server?)."
            ) from None
        except (orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError):
            raise ServerError(
                f"What answers at {server.shown} is not a LangGraph Server: its answer for "
                f"{what} is not JSON. Check the URL."
            ) from None
        except sdk_errors.NotFoundError as exc:
            name = f"Thread {thread_id!r}" if thread_id else "The resource"
            raise ThreadNotFoundError(
                f"{name} was not found on the LangGraph Server at {server.shown} ({what}). "
                "Check the thread id and the server URL."
            ) from exc
        except (sdk_errors.AuthenticationError, sdk_errors.PermissionDeniedError) as exc:
            raise ServerAuthError(
                f"The LangGraph Server at {server.shown} refused the credentials "
                f"(HTTP {exc.response.status_code}) for {what}. Pass api_key=... or set "
                f"${API_KEY_ENV} (or the headers its auth handler wants)."
            ) from exc
        except _RETRIED as exc:
            if attempt >= server.retries:
                kind = (
                    "timed out"
                    if isinstance(exc, (sdk_errors.APITimeoutError, httpx.TimeoutException))
                    else f"answered HTTP {exc.response.status_code}"
                    if isinstance(exc, sdk_errors.APIStatusError)
                    else "could not be reached"
                )
                raise ServerError(
                    f"The LangGraph Server at {server.shown} {kind} for {what} after "
                    f"{attempt} attempt(s). Check that it is running (GET {server.shown}/ok)."
                ) from exc
            response = exc.response if isinstance(exc, sdk_errors.APIStatusError) else None
            yield sleep(wait_before(attempt, server.backoff, response))
        except sdk_errors.APIStatusError as exc:
            raise ServerError(
                f"The LangGraph Server at {server.shown} answered HTTP "
                f"{exc.response.status_code} for {what}."
            ) from exc


def _check_shape(
    server: ServerConnection, what: str, result: Any, shape: Literal["list", "object"] | None
) -> None:
    """A :class:`ServerError` when ``result`` is not of the ``shape`` the request answers."""
    if shape is None:
        return
    if shape == "list":
        fits = isinstance(result, list) and all(isinstance(item, dict) for item in result)
        expected = "a list of objects"
    else:
        fits = isinstance(result, dict)
        expected = "an object"
    if not fits:
        got = "nothing" if result is None else f"a JSON {_json_kind(result)}"
        raise ServerError(
            f"What answers at {server.shown} is not a LangGraph Server: it answered {what} "
            f"with {got} where {expected} was expected. Check the URL and the server's version."
        )


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list" if all(isinstance(item, dict) for item in value) else "list of non-objects"
    return {str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )
