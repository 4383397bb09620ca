"""Opening checkpointers by URL: savers, owner-only files, redacted connection errors."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graphs import weather
from lg_eval.datasets import Case
from lg_eval.errors import CheckpointerError
from lg_eval.play import aopen_checkpointer, aplay_case, open_checkpointer, play_case

SCRIPT = Case.model_validate(
    {
        "id": "c",
        "turns": [
            {"input": {"messages": [{"role": "user", "content": "weather?", "id": "h"}]}},
            {"resume": "sunny"},
        ],
    }
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_relative_sqlite_url_creates_owner_only_dirs_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    old_umask = os.umask(0o022)
    try:
        with open_checkpointer("sqlite:///runs/nested/threads.sqlite") as saver:
            assert isinstance(saver, SqliteSaver)
            play_case(weather.build(checkpointer=saver), SCRIPT, thread_id="t")
            siblings = [
                p for p in (tmp_path / "runs/nested").iterdir() if p.name != "threads.sqlite"
            ]
            assert {p.name for p in siblings} == {"threads.sqlite-wal", "threads.sqlite-shm"}
            assert {p.name: mode(p) for p in siblings} == {p.name: 0o600 for p in siblings}
    finally:
        os.umask(old_umask)
    assert mode(tmp_path / "runs") == 0o700
    assert mode(tmp_path / "runs/nested") == 0o700
    assert mode(tmp_path / "runs/nested/threads.sqlite") == 0o600


def test_the_default_checkpointer_is_lg_eval_checkpoints_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_checkpointer() as saver:
        play_case(weather.build(checkpointer=saver), SCRIPT, thread_id="t")
    assert mode(tmp_path / ".lg_eval") == 0o700
    assert mode(tmp_path / ".lg_eval/checkpoints.sqlite") == 0o600
    with open_checkpointer(None) as again:  # the threads are still there
        assert again.get_tuple({"configurable": {"thread_id": "t"}}) is not None


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    path.touch(mode=0o644)
    os.chmod(path, 0o644)
    with open_checkpointer(f"sqlite:///{path}"):
        pass
    assert mode(path) == 0o644


async def test_async_sqlite_and_memory(tmp_path: Path) -> None:
    async with aopen_checkpointer(f"sqlite:///{tmp_path}/a.sqlite") as saver:
        assert isinstance(saver, AsyncSqliteSaver)
        played = await aplay_case(weather.build(checkpointer=saver), SCRIPT, thread_id="t")
        assert played.completed
    assert mode(tmp_path / "a.sqlite") == 0o600
    async with aopen_checkpointer("memory://") as memory:
        assert isinstance(memory, InMemorySaver)
    with open_checkpointer("memory://") as memory:
        assert isinstance(memory, InMemorySaver)


def test_an_unusable_sqlite_path_is_a_checkpointer_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with (
        pytest.raises(CheckpointerError, match="cannot create the SQLite checkpointer file"),
        open_checkpointer(f"sqlite:///{tmp_path}/file/threads.sqlite"),
    ):
        pass
    (tmp_path / "junk.sqlite").write_text("this is not a database" * 100)
    with (
        pytest.raises(CheckpointerError, match="cannot open the SQLite checkpointer"),
        open_checkpointer(f"sqlite:///{tmp_path}/junk.sqlite"),
    ):
        pass


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chain(exc: BaseException | None) -> list[BaseException]:
    out = []
    while exc is not None:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def test_postgres_connection_errors_never_show_the_password() -> None:
    pytest.importorskip("psycopg")
    url = f"postgresql://user:PASSWORD@127.0.0.1:{closed_port()}/db"
    with pytest.raises(CheckpointerError) as info, open_checkpointer(url):
        pass
    assert str(info.value).startswith(
        "cannot open the Postgres checkpointer postgresql://user:***@127.0.0.1:"
    )
    assert all("PASSWORD" not in str(e) and "PASSWORD" not in repr(e) for e in chain(info.value))


def test_postgres_errors_that_echo_the_dsn_are_scrubbed() -> None:
    pytest.importorskip("psycopg")
    url = "postgresql://user:PASSWORD@127.0.0.1:1/db?bogus_option=1"
    with pytest.raises(CheckpointerError) as info, open_checkpointer(url):
        pass
    assert all("PASSWORD" not in str(e) for e in chain(info.value))


async def test_async_postgres_connection_errors_never_show_the_password() -> None:
    pytest.importorskip("psycopg")
    url = f"postgresql://user:PASSWORD@127.0.0.1:{closed_port()}/db"
    with pytest.raises(CheckpointerError) as info:
        async with aopen_checkpointer(url):
            pass
    assert "postgresql://user:***@127.0.0.1:" in str(info.value)
    assert all("PASSWORD" not in str(e) for e in chain(info.value))


@pytest.mark.postgres
def test_postgres_url_opens_a_ready_saver(pg_dsn: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    with open_checkpointer(pg_dsn) as saver:
        assert isinstance(saver, PostgresSaver)
        played = play_case(
            weather.build(checkpointer=saver), SCRIPT, thread_id=f"pg-{uuid.uuid4()}"
        )
        assert played.completed


@pytest.mark.postgres
async def test_async_postgres_url_opens_a_ready_saver(pg_dsn: str) -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with aopen_checkpointer(pg_dsn) as saver:
        assert isinstance(saver, AsyncPostgresSaver)
        played = await aplay_case(
            weather.build(checkpointer=saver), SCRIPT, thread_id=f"apg-{uuid.uuid4()}"
        )
        assert played.completed


@pytest.mark.postgres
def test_many_processes_opening_a_fresh_postgres_database_at_once_all_succeed(
    pg_url: str,
) -> None:
    # Ray workers open one URL together; LangGraph's setup() inserts the same migration
    # rows from each connection, so unserialized it fails with a UniqueViolation.
    code = (
        "import sys\n"
        "from lg_eval.play import open_checkpointer\n"
        "with open_checkpointer(sys.argv[1]) as saver:\n"
        "    print(type(saver).__name__)\n"
    )
    opening = [
        subprocess.Popen([sys.executable, "-c", code, pg_url], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]  # fmt: skip
    outcomes = [(p.communicate(timeout=60), p.returncode) for p in opening]
    assert [(out.strip(), rc) for (out, _), rc in outcomes] == [("PostgresSaver", 0)] * 6, [
        err for (_, err), _ in outcomes
    ]


@pytest.mark.postgres
async def test_async_openings_of_a_fresh_postgres_database_at_once_all_succeed(
    pg_url: str,
) -> None:
    async def open_one() -> str:
        async with aopen_checkpointer(pg_url) as saver:
            return type(saver).__name__

    assert await asyncio.gather(*(open_one() for _ in range(6))) == ["AsyncPostgresSaver"] * 6
