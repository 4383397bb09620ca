"""Batch extraction gives exactly what extracting one thread at a time gives.

``extract_threads`` over a list of configs must equal ``[extract_thread(graph, c) for c in
configs]`` on every example scenario and every saver: newest checkpoints, older
checkpoint ids, a thread that does not exist, for batch sizes 1, 3 and more than the
input. On Postgres a batch of short threads is one query, on a SQLite file two statements;
the sweep worker extracts a partition as one batch and still turns a thread's failure into
that thread's error result.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from psycopg import Connection, Cursor
from psycopg.rows import dict_row

from graphs.scenarios import SCENARIOS
from lg_eval import ExtractionWarning, extract_thread
from lg_eval.errors import (
    CheckpointNotFoundError,
    InvalidConfigError,
    InvalidOptionError,
    MissingCheckpointerError,
    ThreadNotFoundError,
)
from lg_eval.extract import aextract_threads, extract_threads
from lg_eval.sweeps._worker import PartitionScorer
from tests.sweeps import helpers

MISSING = "no-such-thread"


def cfg(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread_id}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def outcome(item: Any) -> Any:
    """A trajectory as a dict, or an error as ``(type, message)``."""
    if isinstance(item, Exception):
        return (type(item), str(item))
    return item.model_dump()


def one_at_a_time(graph: Any, configs: list[Any]) -> list[Any]:
    found = []
    for config in configs:
        try:
            found.append(outcome(extract_thread(graph, config)))
        except Exception as exc:
            found.append(outcome(exc))
    return found


def older(graph: Any, thread_id: str) -> str:
    """A root checkpoint halfway through the thread's history."""
    history = list(graph.get_state_history(cfg(thread_id)))
    checkpoint_id: str = history[len(history) // 2].config["configurable"]["checkpoint_id"]
    return checkpoint_id


def scenario_configs(name: str, saver: Any) -> tuple[Any, list[Any]]:
    """The scenario played on two threads (one graph each: a scripted model plays once),
    and configs for both at their newest and an older checkpoint, and a missing thread."""
    SCENARIOS[name].played(saver, "a")
    graph = SCENARIOS[name].played(saver, "b")
    configs = [
        cfg("a"),
        cfg("b", older(graph, "b")),
        cfg(MISSING),
        cfg("b"),
        cfg("a", older(graph, "a")),
    ]
    return graph, configs


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        yield


@pytest.mark.parametrize("batch_size", [1, 3, 100])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_batch_equals_one_thread_at_a_time(name: str, saver: Any, batch_size: int) -> None:
    graph, configs = scenario_configs(name, saver)
    batched = extract_threads(graph, configs, batch_size=batch_size, return_exceptions=True)
    assert [outcome(item) for item in batched] == one_at_a_time(graph, configs)


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_async_batch_equals_one_thread_at_a_time(name: str, async_saver: Any) -> None:
    await SCENARIOS[name].aplayed(async_saver, "a")
    graph = await SCENARIOS[name].aplayed(async_saver, "b")
    configs = [cfg("a"), cfg(MISSING), cfg("b")]
    expected = []
    for config in configs:
        try:
            expected.append(outcome(await _aextract(graph, config)))
        except Exception as exc:
            expected.append(outcome(exc))
    batched = aextract_threads(graph, configs, batch_size=2, return_exceptions=True)
    assert [outcome(item) async for item in batched] == expected


async def _aextract(graph: Any, config: Any) -> Any:
    from lg_eval import aextract_thread

    return await aextract_thread(graph, config)


# --- errors ---------------------------------------------------------------------------


def weather_threads(saver: Any, count: int) -> Any:
    """A deterministic one-turn agent played on threads ``w0`` ... ``w{count-1}``."""
    graph = helpers.build(saver)
    for i in range(count):
        helpers.play(graph, f"w{i}")
    return graph


def test_a_missing_thread_raises_in_its_place_after_the_threads_before_it() -> None:
    graph = weather_threads(InMemorySaver(), 2)
    found = extract_threads(graph, [cfg("w0"), cfg(MISSING), cfg("w1")])
    assert next(found).thread_id == "w0"
    with pytest.raises(ThreadNotFoundError, match=f"Thread '{MISSING}' has no checkpoints"):
        next(found)


def test_the_raised_error_notes_the_thread_and_its_place(sqlite_saver: Any) -> None:
    graph = weather_threads(sqlite_saver, 2)
    with pytest.raises(ThreadNotFoundError) as raised:
        list(extract_threads(graph, [cfg("w0"), cfg("w1"), cfg(MISSING)], batch_size=2))
    assert raised.value.__notes__ == [
        f"while extracting thread '{MISSING}', config 3 in the order given"
    ]


def test_return_exceptions_yields_each_error_in_place_and_goes_on(saver: Any) -> None:
    graph = weather_threads(saver, 2)
    configs = [cfg(MISSING), cfg("w0", "not-a-checkpoint"), {"configurable": {}}, cfg("w1")]
    found = list(extract_threads(graph, configs, batch_size=2, return_exceptions=True))
    assert [type(item) for item in found[:3]] == [
        ThreadNotFoundError,
        CheckpointNotFoundError,
        InvalidConfigError,
    ]
    assert found[3].model_dump() == extract_thread(graph, cfg("w1")).model_dump()


def test_configs_are_read_one_batch_at_a_time() -> None:
    graph = weather_threads(InMemorySaver(), 5)
    taken: list[str] = []

    def configs() -> Iterator[Any]:
        for i in range(5):
            taken.append(f"w{i}")
            yield cfg(f"w{i}")

    found = extract_threads(graph, configs(), batch_size=2)
    assert taken == []
    assert next(found).thread_id == "w0"
    assert taken == ["w0", "w1"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"batch_size": 0}, "batch_size must be a whole number of threads, at least 1; got 0"),
        ({"batch_size": 2.5}, "batch_size must be a whole number"),
        ({"reader": "quick"}, "reader='quick' is not allowed"),
    ],
)
def test_bad_options_are_refused_at_once(kwargs: dict[str, Any], match: str) -> None:
    graph = weather_threads(InMemorySaver(), 1)
    with pytest.raises(InvalidOptionError, match=match):
        extract_threads(graph, [cfg("w0")], **kwargs)


def test_one_config_instead_of_a_list_is_refused() -> None:
    graph = weather_threads(InMemorySaver(), 1)
    with pytest.raises(InvalidOptionError, match="configs must be an iterable of run configs"):
        extract_threads(graph, cfg("w0"))  # type: ignore[arg-type]


def test_a_graph_without_checkpointer_is_refused_at_once() -> None:
    graph = StateGraph(MessagesState).add_node("a", lambda s: s).add_edge(START, "a").compile()
    with pytest.raises(MissingCheckpointerError):
        extract_threads(graph, [cfg("w0")])


# --- Postgres round trips -------------------------------------------------------------


class CountingCursor(Cursor[Any]):
    """Counts the statements its connection sends (``executed`` on the connection)."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        self.connection.executed.append(str(query))  # type: ignore[attr-defined]
        return super().execute(query, params, **kwargs)


@pytest.fixture
def counted(postgres_saver: Any, pg_dsn: str) -> Iterator[Any]:
    """A second PostgresSaver on the same (truncated) tables, counting its statements."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with Connection.connect(
        pg_dsn,
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        cursor_factory=CountingCursor,
    ) as conn:
        conn.executed = []  # type: ignore[attr-defined]
        yield PostgresSaver(conn)


def test_a_postgres_batch_of_short_threads_is_one_query(counted: Any) -> None:
    graph = weather_threads(counted, 7)
    counted.conn.executed.clear()
    found = list(extract_threads(graph, [cfg(f"w{i}") for i in range(7)], batch_size=4))
    assert [t.thread_id for t in found] == [f"w{i}" for i in range(7)]
    assert len(counted.conn.executed) == 2


def test_one_thread_at_a_time_is_one_query_per_thread(counted: Any) -> None:
    graph = weather_threads(counted, 7)
    counted.conn.executed.clear()
    for i in range(7):
        extract_thread(graph, cfg(f"w{i}"))
    assert len(counted.conn.executed) == 7


def test_threads_stopped_mid_thread_add_one_query_per_batch(counted: Any) -> None:
    SCENARIOS["weather"].played(counted, "a")  # an interrupt: two turns
    graph = SCENARIOS["weather"].played(counted, "b")
    counted.conn.executed.clear()
    found = list(extract_threads(graph, [cfg("a"), cfg("b")], reader="fast"))
    assert len(found) == 2
    assert len(counted.conn.executed) == 2


# --- SQLite statements ----------------------------------------------------------------


@pytest.fixture
def sqlite_statements(sqlite_saver: Any, tmp_path: Any) -> Iterator[tuple[Any, list[str]]]:
    """The SQLite saver and the statements the fast reader's own read-only connection to
    its file runs (the reader keeps one per file)."""
    from lg_eval.extract.fast._sqlite import _connection

    weather_threads(sqlite_saver, 1)  # the file exists with its tables
    conn = _connection(str(tmp_path / "checkpoints.sqlite"))[0]
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        yield sqlite_saver, statements
    finally:
        conn.set_trace_callback(None)


def test_a_sqlite_batch_is_two_statements_for_all_its_threads(
    sqlite_statements: tuple[Any, list[str]],
) -> None:
    saver, statements = sqlite_statements
    graph = weather_threads(saver, 7)
    configs = [cfg(f"w{i}") for i in range(7)]
    expected = one_at_a_time(graph, configs)
    statements.clear()
    found = [outcome(t) for t in extract_threads(graph, configs, batch_size=4)]
    assert found == expected
    reads = [s.split(" FROM ")[1].split(" ")[0] for s in statements if s.startswith("SELECT")]
    assert reads == ["checkpoints", "writes", "checkpoints", "writes"]  # batches of 4 and 3
    statements.clear()
    extract_thread(graph, cfg("w0"))
    assert len([s for s in statements if s.startswith("SELECT")]) == 2  # one thread alone


def test_a_thread_the_sqlite_batch_cannot_read_is_read_alone(
    sqlite_statements: tuple[Any, list[str]],
) -> None:
    """A row the fast path cannot read (a checkpoint stored with another serializer) and a
    thread with no rows leave those threads to be read alone, as ``extract_thread`` reads
    them; the rest of the batch is read in the batch's two statements only."""
    saver, statements = sqlite_statements
    graph = weather_threads(saver, 3)
    saver.conn.execute("UPDATE checkpoints SET type = 'json' WHERE thread_id = 'w1'")
    saver.conn.commit()
    configs = [cfg("w0"), cfg("w1"), cfg(MISSING), cfg("w2")]
    expected = one_at_a_time(graph, configs)
    assert [type(item) for item in expected[1:3]] == [tuple, tuple]  # errors
    statements.clear()
    found = extract_threads(graph, configs, batch_size=4, return_exceptions=True)
    assert [outcome(item) for item in found] == expected
    selects = [s for s in statements if s.startswith("SELECT")]
    reads = {t: sum(f"'{t}'" in s for s in selects) for t in ("w0", "w1", MISSING, "w2")}
    assert reads == {"w0": 2, "w1": 4, MISSING: 4, "w2": 2}  # the batch's 2, then alone


def test_an_in_memory_sqlite_database_is_read_one_thread_at_a_time() -> None:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    with sqlite3.connect(":memory:", check_same_thread=False) as conn:
        graph = weather_threads(SqliteSaver(conn), 3)
        configs = [cfg("w2"), cfg(MISSING), cfg("w0")]
        expected = one_at_a_time(graph, configs)
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        found = list(extract_threads(graph, configs, batch_size=3, return_exceptions=True))
        conn.set_trace_callback(None)
        assert [outcome(item) for item in found] == expected
        selects = [s for s in statements if s.startswith("SELECT")]
        named = [sum(f"'{t}'" in s for t in ("w2", MISSING, "w0")) for s in selects]
        assert selects and named == [1] * len(selects)  # no statement reads two threads
        # each thread alone: its checkpoint rows, its writes, then the checkpoints where its
        # run stopped for the human, read whole (a thread with no rows has none of those)
        assert {t: sum(f"'{t}'" in s for s in selects) for t in ("w2", MISSING, "w0")} == {
            "w2": 3,
            MISSING: 2,
            "w0": 3,
        }


# --- the sweep worker -----------------------------------------------------------------


def test_the_sweep_worker_extracts_a_partition_in_one_query(counted: Any) -> None:
    graph = weather_threads(counted, 5)
    partition = [(f"w{i}", newest(graph, f"w{i}")) for i in range(5)]
    counted.conn.executed.clear()
    scored = PartitionScorer("run", graph, helpers.EVALUATORS)(partition)
    assert [result.status for _, result in scored] == ["passed"] * 5
    assert len(counted.conn.executed) == 1


def test_the_sweep_worker_turns_a_failed_thread_into_its_error_result(saver: Any) -> None:
    graph = weather_threads(saver, 2)
    partition = [("w0", newest(graph, "w0")), (MISSING, "x"), ("w1", newest(graph, "w1"))]
    scored = PartitionScorer("run", graph, helpers.EVALUATORS)(partition)
    assert [(c, r.thread_id, r.status) for c, r in scored] == [
        (partition[0][1], "w0", "passed"),
        ("x", MISSING, "error"),
        (partition[2][1], "w1", "passed"),
    ]
    assert scored[1][1].error == (
        f"extraction failed: ThreadNotFoundError: Thread '{MISSING}' has no checkpoints in "
        "this checkpointer. Check the thread_id, and that the graph was run with this "
        "checkpointer (and this thread_id) before extracting."
    )


def newest(graph: Any, thread_id: str) -> str:
    checkpoint_id: str = graph.get_state(cfg(thread_id)).config["configurable"]["checkpoint_id"]
    return checkpoint_id


async def test_async_batch_on_a_sync_saver_equals_the_sync_batch(saver: Any) -> None:
    graph = weather_threads(saver, 3)
    configs = [cfg("w2"), cfg(MISSING), cfg("w0")]
    expected = [outcome(t) for t in extract_threads(graph, configs, return_exceptions=True)]
    found = aextract_threads(graph, configs, batch_size=2, return_exceptions=True)
    assert [outcome(item) async for item in found] == expected


def test_the_postgres_batch_query_is_costed_below_the_jit_threshold(postgres_saver: Any) -> None:
    """With ``jsonb_each_text``'s estimate of 100 rows per checkpoint, a batch of 50 from a
    table of 150 threads was costed past ``jit_above_cost`` (the default, 100,000) and the
    server compiled it, tens of milliseconds each time."""
    from lg_eval.extract.fast._postgres import THREADS_SQL

    weather_threads(postgres_saver, 150)
    conn = postgres_saver.conn
    conn.execute("ANALYZE checkpoints")
    with conn.cursor() as cur:
        cur.execute(
            "EXPLAIN (FORMAT JSON) " + THREADS_SQL, {"threads": [f"w{i}" for i in range(50)]}
        )
        (row,) = cur.fetchall()
    plan = next(iter(row.values()))[0]["Plan"]
    assert plan["Total Cost"] < 100_000
