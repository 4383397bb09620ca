"""Sweeps over a real LangGraph Server: listed by its search, incremental by its checkpoints."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph_sdk import get_sync_client

from lg_eval.errors import InvalidOptionError, ServerAuthError
from lg_eval.server import STATUSES, ServerConnection, list_server_threads, thread_filter
from lg_eval.sweeps import SweepResult, sweep_threads
from tests.server.echo_threads import another_turn, make_threads, newest_checkpoints
from tests.server.guarded import KEY

TURNS = "tests.sweeps.helpers:turns"
"""The thread's turn count as a score: 1/n (1.0 after one turn, 0.5 after two)."""


def _server(url: str) -> ServerConnection:
    return ServerConnection(url, api_key=KEY)


def _batch() -> dict[str, str]:
    return {"batch": uuid.uuid4().hex}


def test_second_sweep_after_five_of_200_changed_scores_exactly_five(
    guarded_url: str, tmp_path: Path
) -> None:
    batch = _batch()
    made = make_threads(guarded_url, batch, 200)
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"

    def sweep() -> SweepResult:
        return sweep_threads(
            server=_server(guarded_url), metadata=batch, evaluators=[TURNS], store=store,
            name="echo", page_size=40, partition_size=25,
        )  # fmt: skip

    first = sweep()
    assert sorted(first.thread_ids) == sorted(made)
    assert first.checkpoints == newest_checkpoints(guarded_url, made)
    assert {r.score_of("turns") for r in first.run.results} == {1.0}

    changed = made[10:15]
    another_turn(guarded_url, changed)
    second = sweep()
    assert sorted(second.thread_ids) == sorted(changed)
    assert second.checkpoints == newest_checkpoints(guarded_url, changed)
    assert {r.case_id: r.score_of("turns") for r in second.run.results} == {t: 0.5 for t in changed}
    third = sweep()
    assert third.stored is False and third.thread_ids == []


def test_status_filter_keeps_only_threads_stopped_at_a_breakpoint(
    guarded_url: str, tmp_path: Path
) -> None:
    batch = _batch()
    stopped = make_threads(guarded_url, batch, 3, interrupt=True)
    make_threads(guarded_url, batch, 4)
    result = sweep_threads(
        server=_server(guarded_url), metadata=batch, status="interrupted",
        evaluators=["redundancy"], store=tmp_path / "r.sqlite",
    )  # fmt: skip
    assert sorted(result.thread_ids) == sorted(stopped)


def test_assistant_filter_takes_graph_id_or_assistant_uuid(
    guarded_url: str, tmp_path: Path
) -> None:
    batch = _batch()
    made = make_threads(guarded_url, batch, 3)
    echo = get_sync_client(url=guarded_url, api_key=KEY).assistants.search(graph_id="echo")[0]

    def ids(assistant: str) -> list[str]:
        return sorted(sweep_threads(
            server=_server(guarded_url), metadata=batch, assistant_id=assistant,
            evaluators=["redundancy"], store=tmp_path / "r.sqlite", incremental=False,
            page_size=5000,  # more than the server's API allows per page: asked 1000 at a time
        ).thread_ids)  # fmt: skip

    assert ids("echo") == sorted(made)
    assert ids(str(echo["assistant_id"])) == sorted(made)
    assert ids("no-such-graph") == []


def test_since_keeps_threads_whose_newest_checkpoint_is_newer(
    guarded_url: str, tmp_path: Path
) -> None:
    batch = _batch()
    older = make_threads(guarded_url, batch, 3)
    time.sleep(0.05)
    boundary = datetime.now(UTC)
    newer = make_threads(guarded_url, batch, 2)

    def ids(**window: object) -> list[str]:
        return sorted(sweep_threads(
            server=_server(guarded_url), metadata=batch, evaluators=["redundancy"],
            store=tmp_path / "r.sqlite", incremental=False, **window,  # type: ignore[arg-type]
        ).thread_ids)  # fmt: skip

    assert ids(since=boundary) == sorted(newer)
    assert ids(until=boundary) == sorted(older)


def test_headers_carry_the_key_a_custom_auth_handler_reads(
    guarded_url: str, tmp_path: Path
) -> None:
    batch = _batch()
    made = make_threads(guarded_url, batch, 2)
    server = ServerConnection(guarded_url, headers={"Authorization": f"Bearer {KEY}"})
    result = sweep_threads(
        server=server, metadata=batch, evaluators=["redundancy"], store=tmp_path / "r.sqlite"
    )
    assert sorted(result.thread_ids) == sorted(made)


def test_wrong_key_is_server_auth_error_naming_the_server(guarded_url: str, tmp_path: Path) -> None:
    server = ServerConnection(guarded_url, api_key="lsv2-wrong-key-0000")
    with pytest.raises(ServerAuthError, match=r"at http://127\.0\.0\.1:\d+ refused .*\(HTTP 401\)"):
        sweep_threads(server=server, evaluators=["redundancy"], store=tmp_path / "r.sqlite")


def test_server_and_checkpointer_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match=r"either checkpointer= .* or server="):
        sweep_threads(
            server="http://127.0.0.1:1", checkpointer=f"sqlite:///{tmp_path / 'c.sqlite'}"
        )


@pytest.mark.parametrize("name", ["x-api-key", "X-Api-Key"])
def test_api_key_header_is_refused_for_api_key(name: str) -> None:
    with pytest.raises(InvalidOptionError, match="api_key="):
        ServerConnection("http://127.0.0.1:1", headers={name: "k"})


@pytest.mark.parametrize("status", ["done", "IDLE", ""])
def test_unknown_status_is_invalid_option(status: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="status="):
        sweep_threads(server="http://127.0.0.1:1", status=status, store=tmp_path / "r.sqlite")


@pytest.mark.parametrize("options", [{"page_size": 0}, {"concurrency": 0}, {"concurrency": 1.5}])
def test_bad_listing_options_are_invalid_option_before_any_request(
    options: dict[str, object],
) -> None:
    with pytest.raises(InvalidOptionError, match=next(iter(options))):
        next(list_server_threads(ServerConnection("http://127.0.0.1:1"), **options))  # type: ignore[arg-type]


@given(status=st.text(max_size=12), assistant=st.one_of(st.uuids().map(str), st.text(max_size=20)))
def test_thread_filter_accepts_exactly_the_statuses_and_tells_uuids_from_graph_ids(
    status: str, assistant: str
) -> None:
    if status not in STATUSES:
        with pytest.raises(InvalidOptionError, match="status="):
            thread_filter(status=status)
    else:
        assert thread_filter(status=status) == {"status": status}
    if not assistant:
        with pytest.raises(InvalidOptionError, match="assistant_id="):
            thread_filter(assistant_id=assistant)
        return
    key = "assistant_id" if _is_uuid(assistant) else "graph_id"
    assert thread_filter(assistant_id=assistant, metadata={"team": "a"}) == {
        "metadata": {"team": "a", key: assistant}
    }


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower() and len(text) == 36
    except ValueError:
        return False
