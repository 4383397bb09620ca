"""A LangGraph Server that fails: real HTTP answers from a proxy in front of a real server.

Retries (bounded, ``Retry-After`` honoured), 401/403 not retried, timeouts, and a sweep cut
off by an outage that the next sweep finishes: each thread stored once.
"""

from __future__ import annotations

import socket
import sys
import time
import traceback
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval.errors import LgEvalError, ServerAuthError, ServerError
from lg_eval.experiments import open_store
from lg_eval.server import (
    API_KEY_ENV,
    ServerConnection,
    extract_server_thread,
    list_server_threads,
)
from lg_eval.server._retry import MAX_WAIT, retry_after, wait_before
from lg_eval.sweeps import sweep_threads
from tests.server.echo_threads import make_threads
from tests.server.guarded import KEY
from tests.server.proxy import Proxy, Reply, forward, proxying


@pytest.fixture(scope="module")
def shared_proxy(guarded_url: str) -> Iterator[Proxy]:
    with proxying(guarded_url) as proxy:
        yield proxy


@pytest.fixture
def proxy(shared_proxy: Proxy) -> Iterator[Proxy]:
    """The module's proxy, forwarding and with nothing seen, for each test."""
    shared_proxy.answer = forward
    shared_proxy.seen.clear()
    yield shared_proxy
    shared_proxy.answer = forward


def _through(proxy: Proxy, **patience: float) -> ServerConnection:
    return ServerConnection(proxy.url, api_key=KEY, **patience)  # type: ignore[arg-type]


def test_429_and_5xx_are_retried_waiting_as_retry_after_asks(
    proxy: Proxy, guarded_url: str
) -> None:
    (thread_id,) = make_threads(guarded_url, {"batch": uuid.uuid4().hex}, 1)
    direct = extract_server_thread(ServerConnection(guarded_url, api_key=KEY), thread_id)
    failures = {1: Reply(429, {"Retry-After": "1"}), 2: Reply(502)}
    proxy.answer = lambda number, method, path: failures.get(number)
    started = time.monotonic()
    through = extract_server_thread(_through(proxy, backoff=0.05), thread_id)
    assert time.monotonic() - started >= 1.0  # the 429 asked for a second
    assert through == direct
    assert [path for _, path, _ in proxy.seen[:3]] == [proxy.seen[0][1]] * 3  # one request, 3x


def test_5xx_every_time_is_server_error_after_exactly_retries_attempts(proxy: Proxy) -> None:
    proxy.answer = lambda number, method, path: Reply(503)
    with pytest.raises(ServerError) as caught:
        next(list_server_threads(_through(proxy, retries=3, backoff=0.0)))
    assert str(caught.value).startswith(
        f"The LangGraph Server at {proxy.url} answered HTTP 503 for threads.search (offset 0) "
        "after 3 attempt(s)."
    )
    assert len(proxy.seen) == 3


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_are_server_auth_errors_not_retried(proxy: Proxy, status: int) -> None:
    proxy.answer = lambda number, method, path: Reply(status)
    thread_id = str(uuid.uuid4())
    with pytest.raises(ServerAuthError, match=rf"at {proxy.url} refused .*\(HTTP {status}\)"):
        extract_server_thread(_through(proxy, retries=3, backoff=0.0), thread_id)
    assert len(proxy.seen) == 1
    assert proxy.seen[0][2]["x-api-key"] == KEY  # the key went out, as the SDK sends it


def test_a_reply_that_never_comes_is_a_timeout_server_error(proxy: Proxy) -> None:
    proxy.answer = lambda number, method, path: Reply(200, delay=1.0)
    with pytest.raises(ServerError, match=rf"at {proxy.url} timed out .* after 2 attempt"):
        next(list_server_threads(_through(proxy, timeout=0.2, retries=2, backoff=0.0)))
    assert len(proxy.seen) == 2


@pytest.mark.parametrize("resume", [False, True], ids=["next-sweep", "same-run-id"])
def test_sweep_cut_off_by_an_outage_resumes_with_each_thread_stored_once(
    proxy: Proxy, guarded_url: str, tmp_path: Path, resume: bool
) -> None:
    batch = {"batch": uuid.uuid4().hex}
    made = make_threads(guarded_url, batch, 20)
    store = tmp_path / "results.sqlite"

    def sweep(run_id: str | None = None) -> list[str]:
        return sweep_threads(
            server=_through(proxy, retries=2, backoff=0.0), metadata=batch,
            evaluators=["redundancy"], store=store, name="echo", page_size=10,
            partition_size=4, run_id=run_id,
        ).thread_ids  # fmt: skip

    histories: list[str] = []

    def outage(number: int, method: str, path: str) -> Reply | None:
        """The server goes down after 10 thread histories: a partition or two are stored."""
        if path.endswith("/history"):
            histories.append(path)
        return Reply(503) if len(histories) > 10 else None

    proxy.answer = outage
    with pytest.raises(ServerError, match=rf"at {proxy.url} answered HTTP 503") as caught:
        sweep()
    with open_store(store) as results:
        (cut,) = results.runs()
        before = [r.case_id for r in results.iter_results(cut.run_id)]
    assert cut.status == "interrupted"
    assert 0 < len(before) < len(made)
    assert str(caught.value).endswith(
        f"The sweep stored {len(before)} thread(s) before that; the next sweep scores only the "
        f"rest (or resume this run with --run-id {cut.run_id})."
    )

    proxy.answer = forward
    proxy.seen.clear()
    rest = sweep(cut.run_id if resume else None)
    extracted = sorted(path.split("/")[2] for _, path, _ in proxy.seen if path.endswith("/history"))
    assert extracted == sorted(set(made) - set(before))  # only the threads not yet stored
    assert sorted(rest) == sorted(made if resume else extracted)
    with open_store(store) as results:
        every = [r.case_id for run in results.runs() for r in results.iter_results(run.run_id)]
    assert sorted(every) == sorted(made)  # none lost, none twice
    assert sweep() == []


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
def test_any_retry_after_is_none_or_a_finite_wait_within_bounds(value: str) -> None:
    response = httpx.Response(503, headers={"retry-after": value})
    asked = retry_after(response)
    assert asked is None or 0.0 <= asked < float("inf")
    assert 0.0 <= wait_before(1, 0.5, response) <= MAX_WAIT


@pytest.mark.parametrize(
    ("value", "expected"),
    [("7", 7.0), ("0", 0.0), ("-3", 0.0), ("2.5", 2.5), ("inf", None), ("nan", None),
     ("soon", None)],
)  # fmt: skip
def test_retry_after_seconds(value: str, expected: float | None) -> None:
    assert retry_after(httpx.Response(503, headers={"retry-after": value})) == expected


def test_retry_after_http_date_and_the_cap() -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    response = httpx.Response(503, headers={"retry-after": later})
    assert retry_after(response, now=now) == 90.0
    assert wait_before(1, 0.5, response) == MAX_WAIT  # 90 s from now waits at most MAX_WAIT
    past = format_datetime(now - timedelta(seconds=5), usegmt=True)
    assert retry_after(httpx.Response(503, headers={"retry-after": past}), now=now) == 0.0
    assert [wait_before(n, 0.5, None) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]


def test_the_key_comes_from_langgraph_api_key_never_from_langsmith_api_key(
    proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy.answer = lambda number, method, path: Reply(401)
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-langsmith-only")
    with pytest.raises(ServerAuthError):
        next(list_server_threads(ServerConnection(proxy.url)))
    monkeypatch.setenv(API_KEY_ENV, "lsv2-from-the-env")
    with pytest.raises(ServerAuthError):
        next(list_server_threads(ServerConnection(proxy.url)))
    assert [headers.get("x-api-key") for _, _, headers in proxy.seen] == [
        None,
        "lsv2-from-the-env",
    ]


def test_a_thread_gone_between_search_and_state_is_left_out(proxy: Proxy, guarded_url: str) -> None:
    batch = {"batch": uuid.uuid4().hex}
    made = make_threads(guarded_url, batch, 3)
    gone = made[1]
    proxy.answer = lambda number, method, path: (
        Reply(404) if path.startswith(f"/threads/{gone}/state") else None
    )
    listed = [t.thread_id for page in list_server_threads(_through(proxy), metadata=batch)
              for t in page]  # fmt: skip
    assert sorted(listed) == sorted(set(made) - {gone})


@pytest.mark.parametrize("status", [401, 404, 500])
def test_no_error_nor_its_traceback_shows_the_key_or_headers(proxy: Proxy, status: int) -> None:
    secret = "lsv2-sk-never-shown-4242"
    proxy.answer = lambda number, method, path: Reply(status)
    server = ServerConnection(
        proxy.url, api_key=secret, headers={"Authorization": f"Bearer {secret}"}, retries=1
    )
    with pytest.raises(LgEvalError) as caught:
        extract_server_thread(server, str(uuid.uuid4()))
    assert proxy.seen[0][2]["authorization"] == f"Bearer {secret}"  # it was sent
    assert secret not in "".join(traceback.format_exception(caught.value))


CONNECTS: list[tuple[str, int]] = []
"""Every ``socket.connect`` to a loopback address made in this process (an audit hook)."""


def _count_connects(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and isinstance(args[1], tuple) and args[1][:1] == ("127.0.0.1",):
        CONNECTS.append(args[1][:2])


sys.addaudithook(_count_connects)


def test_a_server_that_is_down_is_reported_after_retries_attempts_and_no_more() -> None:
    """Three attempts, three connections: the SDK's own transport, which would retry a
    refused connect 5 times inside each attempt (about 7.5 s), is not in the way."""
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
    CONNECTS.clear()
    with pytest.raises(ServerError, match=rf"at {url} could not be reached .* after 3 attempt"):
        next(list_server_threads(ServerConnection(url, retries=3, backoff=0.05)))
    assert [address for address in CONNECTS if address[1] == port] == [("127.0.0.1", port)] * 3
