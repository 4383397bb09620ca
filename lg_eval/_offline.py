"""Offline by construction: a client that cannot send, and a block where nothing traces.

A root module, so the core (runner, nodes) can keep a run offline without importing the
LangSmith edge package; :mod:`lg_eval.langsmith` re-exports it.

LangSmith sends data from three places, and each needs closing on its own:

* **the client's HTTP calls.** :class:`OfflineClient` is a ``langsmith.Client``
  whose server info is given (no ``GET /info``), that starts no batching thread
  (nothing to drain at process exit), drops the runs tracers hand it (they are
  ``"local"`` runs: ``evaluate(..., upload_results=False)`` keeps them in memory)
  and raises :class:`~lg_eval.langsmith.OfflineError` for any API call, before
  a socket is opened. Its URL is a loopback discard port and its key a
  placeholder, so not even a bug could send the user's key anywhere.
* **tracing decided per call.** ``langsmith.evaluate(upload_results=False)``
  sets tracing to ``"local"`` around the target; LangChain's tracer (which
  LangGraph uses for every node and model call) takes ``"local"`` as *on* and
  posts those child runs through the parent run's client. With
  :func:`offline_client` that client drops them; with any other client they
  would be uploaded.
* **tracing decided by the environment.** ``LANGSMITH_TRACING=true`` turns the
  tracer on for every graph run, in every thread, through the process-wide
  cached client. :func:`offline` turns tracing off in the current context
  *and* process-wide (threads a plain ``ThreadPoolExecutor`` starts do not
  inherit context variables), and swaps the cached client for an offline one,
  so code that builds its tracer or client inside the block gets one that
  cannot send.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn

import requests
from langsmith import Client, run_trees
from langsmith import schemas as ls_schemas
from langsmith._internal import _context
from langsmith.run_helpers import tracing_context

from lg_eval.errors import OfflineError

OFFLINE_API_URL = "http://127.0.0.1:9"
"""Where the offline client points: the loopback discard port (never contacted)."""
OFFLINE_API_KEY = "lg-eval-offline"
"""The offline client's placeholder key (the user's key is never read)."""


def _refuse(what: str) -> NoReturn:
    raise OfflineError(
        f"The offline LangSmith client does not send requests ({what}); nothing was sent. "
        "Use a langsmith.Client() with LANGSMITH_API_KEY set to talk to LangSmith."
    )


class _NoNetworkSession(requests.Session):
    """A ``requests.Session`` that refuses every request before opening a socket."""

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(f"{method!s} {url!s}")

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> NoReturn:
        _refuse(f"{request.method} {request.url}")


class OfflineClient(Client):
    """A ``langsmith.Client`` that never reaches the network (see :func:`offline_client`)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(
            api_url=OFFLINE_API_URL,
            api_key=OFFLINE_API_KEY,
            info=ls_schemas.LangSmithInfo(),
            auto_batch_tracing=False,
            session=_NoNetworkSession(),
            tracing_mode="langsmith",  # no OpenTelemetry exporter, whatever the environment says
            omit_traced_runtime_info=True,
        )
        self._pyo3_client = None  # LANGSMITH_USE_PYO3_CLIENT starts a sender of its own
        self._write_api_urls = {OFFLINE_API_URL: OFFLINE_API_KEY}

    # Traced runs are local: the run trees live in memory, nothing is posted.
    def create_run(self, *args: Any, **kwargs: Any) -> None:
        return None

    def update_run(self, *args: Any, **kwargs: Any) -> None:
        return None

    def batch_ingest_runs(self, *args: Any, **kwargs: Any) -> None:
        return None

    def multipart_ingest(self, *args: Any, **kwargs: Any) -> None:
        return None

    def flush(self, timeout: float | None = None) -> None:
        return None

    def request_with_retries(
        self, method: str, pathname: str, *args: Any, **kwargs: Any
    ) -> NoReturn:
        _refuse(f"{method} {pathname}")

    def _get_langsmith_api(self) -> NoReturn:
        _refuse("LangSmith v2 API")

    def _get_langsmith_api_sync(self) -> NoReturn:
        _refuse("LangSmith v2 API")

    def __repr__(self) -> str:
        return "OfflineClient()"


def offline_client() -> OfflineClient:
    """A ``langsmith.Client`` for ``evaluate`` / ``aevaluate`` that cannot send anything.

    It has its server info (no ``GET /info``), never batches traces (no
    background thread, nothing to flush at exit), keeps traced runs local and
    refuses every API call with :class:`~lg_eval.langsmith.OfflineError`
    before opening a socket. Environment settings (``LANGSMITH_ENDPOINT``,
    ``LANGSMITH_API_KEY``, ``LANGSMITH_TRACING_MODE``...) do not change that.
    """
    return OfflineClient()


_lock = threading.Lock()
_depth = 0
_saved: tuple[Any, Any] = (None, None)
_shared: OfflineClient | None = None


def _shared_client() -> OfflineClient:
    global _shared
    if _shared is None:
        _shared = OfflineClient()
    return _shared


@contextmanager
def offline() -> Iterator[OfflineClient]:
    """Turn LangSmith tracing off for everything run inside the block, and give a client.

    Inside the block: tracing is disabled in this context and process-wide
    (LangGraph's child runs and threads started without a copied context
    included, whatever ``LANGSMITH_TRACING`` says), and the process-wide
    cached client that tracers and ``evaluate(client=None)`` fall back to is
    an :class:`OfflineClient`. Everything is restored when the outermost
    block exits (blocks nest, also across threads). Yields the offline client,
    to pass to ``langsmith.evaluate(..., upload_results=False, client=...)``.

    ``evaluate`` sets tracing back to ``"local"`` around its target; runs made
    there go to ``evaluate``'s client, so pass it the yielded client (or
    :func:`offline_client`).
    """
    global _depth, _saved
    client = _shared_client()
    with _lock:
        if _depth == 0:
            _saved = (_context._GLOBAL_TRACING_ENABLED, run_trees._CLIENT)
            with run_trees._LOCK:
                _context._GLOBAL_TRACING_ENABLED = False
                run_trees._CLIENT = client
        _depth += 1
    try:
        with tracing_context(enabled=False, client=client):
            yield client
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                with run_trees._LOCK:
                    _context._GLOBAL_TRACING_ENABLED, run_trees._CLIENT = _saved
                _saved = (None, None)


def is_offline() -> bool:
    """Whether an :func:`offline` block is open (in any thread)."""
    return _depth > 0


def tracing_is_local(context: Mapping[str, Any] | None = None) -> bool:
    """Whether LangSmith tracing is on but ``"local"`` (runs kept, never uploaded) here."""
    from langsmith.run_helpers import get_tracing_context

    return (context or get_tracing_context()).get("enabled") == "local"
