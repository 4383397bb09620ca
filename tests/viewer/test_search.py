"""The viewer's search reads values, not the stored JSON's syntax, and a slow search holds up
no other page (#40 item 8).

Searching ``_``, ``"``, ``case_id`` or ``thread_id`` matched every case: the search ran
``LIKE`` over each case's JSON text, keys, quotes and run id included. Here it matches the
text values of what a case sent and was asked (and its tags, errors, tool arguments), the
case id, and the whole thread id, on SQLite and on Postgres alike. And a search blocked in
the database does not keep another page from answering: each request reads through a
connection of its own.
"""

from __future__ import annotations

import sqlite3
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lg_eval.experiments import CaseResult, PlayedTurnRecord, ResultStore, RunInfo, open_store
from lg_eval.viewer import Pages, ViewerServer
from lg_eval.viewer import _queries as q

RUN = "r_1"


def _case(case_id: str, **fields: Any) -> CaseResult:
    given: dict[str, Any] = {
        "turns": [PlayedTurnRecord(index=0, kind="input", sent="hello")],
        "tool_calls": [{"name": "get_weather", "args": {"city": "sf"}, "id": "call_1"}],
        **fields,
    }
    return CaseResult(
        run_id=RUN,
        case_id=case_id,
        status="passed",
        thread_id=f"{RUN}:{case_id}:0:1",
        trajectory=[["__start__", "agent", "__interrupt__"]],
        **given,
    )


CASES = [
    _case(
        "c1",
        tags=["vip"],
        turns=[PlayedTurnRecord(index=0, kind="input", sent={"text": "refund order 42"})],
    ),
    _case(
        "c2",
        turns=[
            PlayedTurnRecord(
                index=0,
                kind="input",
                sent="hello",
                asked=[{"id": "i1", "path": "review", "value": {"question": "approve_refund?"}}],
            )
        ],
    ),
    _case("c3", tool_calls=[{"name": "note", "args": {"note": 'say "hi"'}, "id": "call_2"}]),
    _case("c4", error="ValueError: boom"),
]

SEARCHES = [
    ("_", ["c2"]),  # only c2's question holds one: not the keys, run id or node names
    ('"', ["c3"]),
    ("case_id", []),
    ("thread_id", []),
    ("run_id", []),
    ("__start__", []),
    ("get_weather", []),
    ("r_1", []),  # the run id, in every thread id: a thread id matches whole only
    ("r_1:c4:0:1", ["c4"]),
    ("42", ["c1"]),
    ("VIP", ["c1"]),
    ("boom", ["c4"]),
    ("c3", ["c3"]),
    ("hello", ["c2", "c3", "c4"]),
    ("100%", []),
]


def _fill(store: ResultStore) -> None:
    store.begin_run(
        RunInfo(
            run_id=RUN, dataset="d", dataset_hash="h", target="t", checkpointer="c",
            started_at="2026-01-01T00:00:00Z", status="finished", cases=len(CASES),
        )
    )  # fmt: skip
    store.write(list(enumerate(CASES)))


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[ResultStore]:
    with open_store(tmp_path / "results.sqlite") as store:
        _fill(store)
        yield store


@pytest.fixture
def postgres_store(pg_url: str) -> Iterator[ResultStore]:
    with open_store(pg_url) as store:
        _fill(store)
        yield store


def _found(store: ResultStore, text: str) -> list[str]:
    page = q.case_page(store, RUN, q.CaseFilter(search=text), 0)
    return sorted(result.case_id for result in page.results)


@pytest.mark.parametrize(("text", "expected"), SEARCHES)
def test_search_matches_values_on_sqlite(
    sqlite_store: ResultStore, text: str, expected: list[str]
) -> None:
    assert _found(sqlite_store, text) == expected


@pytest.mark.postgres
def test_search_matches_the_same_values_on_postgres(postgres_store: ResultStore) -> None:
    assert {text: _found(postgres_store, text) for text, _ in SEARCHES} == dict(SEARCHES)


def test_the_run_page_shows_only_the_matching_cases(sqlite_store: ResultStore) -> None:
    page = Pages(sqlite_store).respond("/run", {"id": RUN, "q": "_"})
    assert page.status == 200
    assert page.body.count(b'class="case-link"') == 1 and b"<code>c2</code>" in page.body


# --- a slow search holds up no other page ---------------------------------------------------


def test_a_search_stuck_in_the_database_does_not_stall_other_pages(tmp_path: Path) -> None:
    """The first request's connection stops inside SQLite (a progress handler waits on an
    event) until the test lets it go; meanwhile another page must answer."""
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        _fill(store)
    gate, stuck = threading.Event(), threading.Event()
    opened: list[ResultStore] = []

    def opener() -> ResultStore:
        connection = sqlite3.connect(path, check_same_thread=False)
        store = ResultStore(connection, url=f"sqlite:///{path}")
        if not opened:  # the first request's own connection: held inside its queries

            def hold() -> int:
                stuck.set()
                gate.wait()
                return 0

            connection.set_progress_handler(hold, 1)
        opened.append(store)
        return store

    main = open_store(path)
    server = ViewerServer(Pages(main, opener=opener))
    server.start()
    searched: list[bytes] = []

    def search() -> None:
        url = server.url + f"run?id={RUN}&q=approve"
        with urllib.request.urlopen(url, timeout=300) as response:
            searched.append(response.read())

    slow = threading.Thread(target=search)
    try:
        slow.start()
        assert stuck.wait(300), "the search never reached the database"
        with urllib.request.urlopen(server.url, timeout=300) as response:  # while it is stuck
            assert response.status == 200 and RUN.encode() in response.read()
        assert slow.is_alive() and not searched  # the search is still held
    finally:
        gate.set()
        slow.join()
        server.stop()
        main.close()
    assert searched and searched[0].count(b'class="case-link"') == 1
