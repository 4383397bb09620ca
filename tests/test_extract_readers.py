"""The fast reader must give exactly what the generic reader gives, on every thread shape.

Each test extracts one thread twice, with ``reader="fast"`` (which raises rather than fall
back) and ``reader="generic"``, and compares the whole ``ThreadTrajectory`` (turns, states,
results, inputs, resume values, interrupt ids, warnings). Also covered: the fast path
decodes O(turns) values, not O(checkpoints); ``auto`` uses it on the savers it knows and
falls back to the generic reader (with at most one warning) on an untested LangGraph
version, another saver class, or a task it cannot name.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from itertools import chain as chain_all
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt

from graphs.scenarios import SCENARIOS
from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.errors import ExtractionError
from lg_eval.extract import _thread as thread_module
from lg_eval.extract.fast import _versions as versions
from tests.benchmarks.bench_extract import build_agent, run_thread
from tests.test_extract_shapes import Log, chain, note, persistent_subgraph_graph


def cfg(**extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": "t", **extra}}


def quietly(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        return fn(*args, **kwargs)


@contextmanager
def no_snapshots(graph: Any) -> Iterator[None]:
    """Make ``get_state`` fail on ``graph``: the fast reader must plan every checkpoint
    from storage (a snapshot would decode whole states), so with ``reader="fast"`` the
    extraction raises if it asks for one."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fast reader asked for a get_state snapshot")

    graph.get_state = graph.aget_state = refuse
    try:
        yield
    finally:
        del graph.get_state, graph.aget_state


def assert_same(graph: Any, config: Any = None, *, snapshots: bool = True) -> Any:
    with nullcontext() if snapshots else no_snapshots(graph):
        fast = quietly(extract_thread, graph, config or cfg(), reader="fast")
    generic = quietly(extract_thread, graph, config or cfg(), reader="generic")
    assert fast.model_dump() == generic.model_dump()
    return fast


async def assert_same_async(graph: Any, config: Any = None, *, snapshots: bool = True) -> Any:
    with warnings.catch_warnings(), nullcontext() if snapshots else no_snapshots(graph):
        warnings.simplefilter("ignore", ExtractionWarning)
        fast = await aextract_thread(graph, config or cfg(), reader="fast")
        generic = await aextract_thread(graph, config or cfg(), reader="generic")
    assert fast.model_dump() == generic.model_dump()
    return fast


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_on_every_sync_saver(name: str, saver: Any) -> None:
    graph = SCENARIOS[name].played(saver)
    assert assert_same(graph, snapshots=False).turns


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_every_scenario_on_every_async_saver(name: str, async_saver: Any) -> None:
    graph = await SCENARIOS[name].aplayed(async_saver)
    assert (await assert_same_async(graph, snapshots=False)).turns


# --- thread shapes --------------------------------------------------------------------


def before(graph: Any, node: str) -> Any:
    return next(s for s in graph.get_state_history(cfg()) if s.next == (node,))


def test_update_state_edits(saver: Any) -> None:
    graph = chain("a", "b", checkpointer=saver, interrupt_before=["b"])
    graph.invoke({"log": ["in"]}, cfg())
    graph.update_state(cfg(), {"log": ["edited"]})
    graph.update_state(cfg(), {"log": ["as a"]}, as_node="a")
    graph.invoke(None, cfg())
    trajectory = assert_same(graph)
    assert [len(t.edits) for t in trajectory.turns] == [0, 2]


def ask_graph(saver: Any) -> Any:
    """START -> ask (interrupts) -> after."""
    builder = StateGraph(Log)
    builder.add_node("ask", lambda s: {"log": [interrupt("?")]})
    builder.add_node("after", note("after"))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "after")
    return builder.compile(checkpointer=saver)


def test_update_state_as_the_paused_node_reuses_its_task_id(saver: Any) -> None:
    graph = ask_graph(saver)
    graph.invoke({"log": ["in"]}, cfg())
    graph.update_state(cfg(), {"log": ["answered by hand"]}, as_node="ask")
    graph.invoke(None, cfg())
    assert assert_same(graph).turns[-1].state["log"][-1] == "after"


def test_fork_from_an_older_checkpoint(saver: Any) -> None:
    graph = chain("a", "b", "c", checkpointer=saver)
    graph.invoke({"log": ["in"]}, cfg())
    graph.invoke(None, graph.update_state(before(graph, "b").config, {"log": ["edited"]}))
    trajectory = assert_same(graph)
    assert trajectory.turns[0].branched


def test_older_lineage_by_checkpoint_id_and_replay(saver: Any) -> None:
    graph = chain("a", "b", "c", checkpointer=saver)
    graph.invoke({"log": ["in"]}, cfg())
    original_tip = graph.get_state(cfg()).config["configurable"]["checkpoint_id"]
    graph.invoke(None, before(graph, "b").config)  # replay from an old checkpoint
    assert_same(graph)
    assert_same(graph, cfg(checkpoint_id=original_tip))


def test_checkpointer_true_subgraph_run_twice(saver: Any) -> None:
    graph = persistent_subgraph_graph().copy(update={"checkpointer": saver})
    for text in ("first", "second"):
        graph.invoke({"log": [text]}, cfg())
        graph.invoke(Command(resume=f"ok-{text}"), cfg())
    assert len(assert_same(graph).turns) == 4


def send_graph(saver: Any) -> Any:
    builder = StateGraph(Log)
    builder.add_node("split", note("split"))
    builder.add_node(
        "check",
        lambda s: {"log": [f"{s['item']}:{interrupt(s['item'])}" if s["item"] != "a" else "a"]},
    )
    builder.add_node("merge", note("merge"))
    builder.add_edge(START, "split")
    builder.add_conditional_edges("split", lambda s: [Send("check", {"item": i}) for i in "abc"])
    builder.add_edge("check", "merge")
    return builder.compile(checkpointer=saver)


def test_send_fan_out_with_interrupts_inside_send_tasks(saver: Any) -> None:
    graph = send_graph(saver)
    graph.invoke({"log": []}, cfg())
    pending = graph.get_state(cfg()).interrupts
    graph.invoke(Command(resume={i.id: "fine" for i in pending}), cfg())
    trajectory = assert_same(graph)
    assert [t.name for t in trajectory.turns[0].supersteps[-1].tasks] == ["check"] * 3


async def test_send_fan_out_with_interrupts_on_async_savers(async_saver: Any) -> None:
    graph = send_graph(async_saver)
    await graph.ainvoke({"log": []}, cfg())
    pending = (await graph.aget_state(cfg())).interrupts
    await graph.ainvoke(Command(resume={i.id: "fine" for i in pending}), cfg())
    await assert_same_async(graph)


def test_sends_to_two_nodes_are_each_named_by_their_own_hash(saver: Any) -> None:
    """Send ids are tried against the node the latest one matched first: packets that
    alternate between two nodes must still each get their own node's name."""
    builder = StateGraph(Log)
    builder.add_node("split", note("split"))
    builder.add_node("even", lambda s: {"log": [f"even:{s['item']}"]})
    builder.add_node("odd", lambda s: {"log": [f"odd:{s['item']}"]})
    builder.add_edge(START, "split")
    builder.add_conditional_edges(
        "split", lambda s: [Send("odd" if i % 2 else "even", {"item": i}) for i in range(5)]
    )
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"log": []}, cfg())
    graph.invoke({"log": []}, cfg())
    trajectory = assert_same(graph, snapshots=False)
    for turn in trajectory.turns:
        fan_out = turn.supersteps[-1].tasks
        assert [t.name for t in fan_out] == ["even", "odd", "even", "odd", "even"]
    assert trajectory.turns[-1].state["log"][-5:] == [
        "even:0",
        "odd:1",
        "even:2",
        "odd:3",
        "even:4",
    ]


class Big(TypedDict):
    n: int


def test_integers_past_float_precision_in_state_and_metadata_read_exactly(saver: Any) -> None:
    """Postgres keeps such values as JSON; they must not come back as floats (LangGraph's
    serializer refuses integers past 64 bits, so those never reach storage)."""
    builder = StateGraph(Big)
    builder.add_node("add", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "add")
    graph = builder.compile(checkpointer=saver)
    big = 2**62 + 1
    graph.invoke({"n": big}, {**cfg(), "metadata": {"tenant": big}})
    trajectory = assert_same(graph, snapshots=False)
    assert trajectory.turns[0].input == {"n": big}
    assert trajectory.turns[0].state == {"n": big + 1}
    assert type(trajectory.turns[0].state["n"]) is int


def test_durability_exit(saver: Any) -> None:
    graph = chain("a", "b", checkpointer=saver)
    graph.invoke({"log": ["in"]}, cfg(), durability="exit")
    graph.invoke({"log": ["again"]}, cfg(), durability="exit")
    assert assert_same(graph).warnings


def test_durability_exit_after_a_breakpoint_and_a_pause(saver: Any) -> None:
    graph = chain("a", "b", "c", checkpointer=saver, interrupt_before=["b"])
    graph.invoke({"log": ["in"]}, cfg())
    graph.invoke(None, cfg(), durability="exit")  # resumes past the breakpoint, saves at exit
    paused = ask_graph(saver)
    paused.invoke({"log": []}, cfg(thread_id="p"))
    paused.invoke(Command(resume="yes"), cfg(thread_id="p"), durability="exit")
    assert_same(graph)
    assert_same(paused, cfg(thread_id="p"))


def test_react_agent_with_pauses(saver: Any) -> None:
    graph = build_agent(12, 5, saver)
    run_thread(graph, "t")
    assert len(assert_same(graph).turns) == 3


# --- what the fast path decodes -------------------------------------------------------


def decodes(saver: Any, monkeypatch: pytest.MonkeyPatch, calls: int, reader: str) -> int:
    graph = build_agent(calls, 0, saver)
    thread_id = f"count-{calls}"
    run_thread(graph, thread_id)
    count = 0
    original = saver.serde.loads_typed

    def counting(data: Any) -> Any:
        nonlocal count
        count += 1
        return original(data)

    with monkeypatch.context() as patch:
        patch.setattr(saver.serde, "loads_typed", counting)
        extract_thread(graph, {"configurable": {"thread_id": thread_id}}, reader=reader)
    return count


def test_fast_path_decodes_per_turn_not_per_checkpoint(
    saver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    short, long = decodes(saver, monkeypatch, 3, "fast"), decodes(saver, monkeypatch, 30, "fast")
    assert short == long  # one turn each: the same few values (the final state)
    assert decodes(saver, monkeypatch, 30, "generic") > 10 * long


# --- choosing the reader --------------------------------------------------------------


@pytest.fixture
def weather_graph() -> Any:
    return SCENARIOS["weather"].played(InMemorySaver())


def spy_fast(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = thread_module.read_fast

    def spying(*args: Any) -> Any:
        calls.append(args[2])
        return (yield from real(*args))

    monkeypatch.setattr(thread_module, "read_fast", spying)
    return calls


def test_auto_uses_the_fast_reader_on_known_savers(saver: Any, monkeypatch: pytest.MonkeyPatch):
    graph = SCENARIOS["research"].played(saver)
    calls = spy_fast(monkeypatch)
    monkeypatch.setattr(thread_module, "read_generic", None)  # any use would fail
    assert extract_thread(graph, cfg()).turns and calls == ["t"]


@pytest.mark.parametrize(
    ("package", "saver_name"),
    [("langgraph", "memory_saver"), ("langgraph-checkpoint-sqlite", "sqlite_saver")],
)
def test_untested_version_falls_back_with_one_warning(
    package: str, saver_name: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = SCENARIOS["weather"].played(request.getfixturevalue(saver_name))
    real = versions.installed
    monkeypatch.setattr(versions, "installed", lambda p: "9.0.0" if p == package else real(p))
    monkeypatch.setattr(thread_module, "_warned_versions", set())
    calls = spy_fast(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = extract_thread(graph, cfg())
        second = extract_thread(graph, cfg())
    assert calls == []
    messages = [str(w.message) for w in caught if issubclass(w.category, ExtractionWarning)]
    assert len(messages) == 1 and f"{package} 9.0.0" in messages[0]
    expected = extract_thread(graph, cfg(), reader="generic").model_dump()
    assert first.model_dump() == second.model_dump() == expected
    with pytest.raises(ExtractionError, match="reader='fast' cannot read this thread"):
        extract_thread(graph, cfg(), reader="fast")


STORAGE_PACKAGES = {
    "InMemorySaver": "langgraph-checkpoint",
    "SqliteSaver": "langgraph-checkpoint-sqlite",
    "PostgresSaver": "langgraph-checkpoint-postgres",
}


def pretend_installed(monkeypatch: pytest.MonkeyPatch, found: dict[str, str | None]) -> None:
    """Make the version check see ``found`` (package -> version or None) and forget which
    fallbacks this process already announced."""
    real = versions.installed
    monkeypatch.setattr(versions, "installed", lambda p: found[p] if p in found else real(p))
    monkeypatch.setattr(thread_module, "_warned_versions", set())


def extraction_warnings(run: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if issubclass(w.category, ExtractionWarning)]


def test_fallback_warning_names_package_installed_version_and_tested_range(
    saver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = STORAGE_PACKAGES[type(saver).__name__]
    low, high = {**versions.TESTED, **versions.STORAGE_TESTED}[package]
    graph = SCENARIOS["weather"].played(saver)
    pretend_installed(monkeypatch, {package: "99.1.0"})
    calls = spy_fast(monkeypatch)
    found: list[Any] = []
    messages = extraction_warnings(lambda: found.extend(extract_thread(graph, cfg()) for _ in "ab"))
    assert calls == []
    assert len(messages) == 1, messages  # once per process, not once per thread
    tested = f"{package}>={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
    assert messages[0].startswith(thread_module.FAST_READER_FALLBACK)
    assert f"{package} 99.1.0 is installed" in messages[0] and tested in messages[0]
    expected = extract_thread(graph, cfg(), reader="generic").model_dump()
    assert [t.model_dump() for t in found] == [expected, expected]


def test_fallback_warning_for_a_package_that_is_not_installed(
    sqlite_saver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = SCENARIOS["weather"].played(sqlite_saver)
    pretend_installed(monkeypatch, {"langgraph-checkpoint-sqlite": None})
    (message,) = extraction_warnings(lambda: extract_thread(graph, cfg()))
    assert "langgraph-checkpoint-sqlite is not installed" in message


async def test_fallback_warning_is_emitted_by_the_async_reader_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = await SCENARIOS["weather"].aplayed(InMemorySaver())
    pretend_installed(monkeypatch, {"langgraph": "1.99.0"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await aextract_thread(graph, cfg())
        await aextract_thread(graph, cfg())
    messages = [str(w.message) for w in caught if issubclass(w.category, ExtractionWarning)]
    assert len(messages) == 1 and "langgraph 1.99.0 is installed" in messages[0]


def test_no_fallback_warning_on_tested_versions(saver: Any, monkeypatch: pytest.MonkeyPatch):
    graph = SCENARIOS["weather"].played(saver)
    ranges = {**versions.TESTED, **versions.STORAGE_TESTED}
    pretend_installed(monkeypatch, {p: ".".join(map(str, low)) for p, (low, _) in ranges.items()})
    calls = spy_fast(monkeypatch)
    assert extraction_warnings(lambda: extract_thread(graph, cfg())) == []
    assert calls == ["t"]


def test_unknown_checkpoint_format_falls_back_with_one_warning(
    memory_saver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = SCENARIOS["weather"].played(memory_saver)
    monkeypatch.setattr(versions, "CHECKPOINT_FORMAT", 99)
    monkeypatch.setattr(thread_module, "_warned_versions", set())
    messages = extraction_warnings(lambda: [extract_thread(graph, cfg()) for _ in "ab"])
    assert len(messages) == 1 and "(fast path reads v99; langgraph-checkpoint " in messages[0]
    assert messages[0].startswith(thread_module.FAST_READER_FALLBACK)
    with pytest.raises(ExtractionError, match="checkpoint format v"):
        extract_thread(graph, cfg(), reader="fast")


def test_other_saver_classes_use_the_generic_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    class CustomSaver(InMemorySaver):
        pass

    graph = SCENARIOS["weather"].played(CustomSaver())
    calls = spy_fast(monkeypatch)
    assert extract_thread(graph, cfg()).turns and calls == []
    with pytest.raises(ExtractionError, match="no fast reader for CustomSaver"):
        extract_thread(graph, cfg(), reader="fast")


def test_a_task_no_hash_names_falls_back_instead_of_guessing(weather_graph: Any) -> None:
    saver = weather_graph.checkpointer
    for writes in saver.writes.values():
        for key, (task_id, channel, value, path) in list(writes.items()):
            if path == "~__pregel_pull, agent":
                writes[key] = (task_id, channel, value, "~__pregel_pull, tools")
    with pytest.raises(ExtractionError, match="does not hash as node 'tools'"):
        extract_thread(weather_graph, cfg(), reader="fast")
    expected = extract_thread(weather_graph, cfg(), reader="generic").model_dump()
    assert extract_thread(weather_graph, cfg()).model_dump() == expected


class Scratch(TypedDict, total=False):
    log: Annotated[list, operator.add]
    scratch: Annotated[str, UntrackedValue(str)]


def test_a_task_writing_only_untracked_values_reads_the_same(saver: Any) -> None:
    builder = StateGraph(Scratch)
    builder.add_node("scribble", lambda s: {"scratch": "not persisted"})
    builder.add_node("done", lambda s: {"log": ["done"]})
    builder.add_edge(START, "done")
    builder.add_edge("done", "scribble")  # the last node: no edge write after it
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"log": []}, cfg())
    # LangGraph records no write for ``scribble``: the generic reader lists it as planned
    # (without an outcome), and so must the fast one (it plans every checkpoint of such
    # graphs from storage instead of from writes).
    assert_same(graph, snapshots=False)


class Memo(TypedDict, total=False):
    messages: str


def test_a_messages_channel_that_is_not_a_list_gives_the_state_as_result(saver: Any) -> None:
    """The fast reader decodes only the last message of a ``messages`` list for a turn's
    result; a ``messages`` value that is no list makes it use the whole state, as the
    generic reader does."""
    builder = StateGraph(Memo)
    builder.add_node("write", lambda s: {"messages": s["messages"] + " and more"})
    builder.add_edge(START, "write")
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"messages": "a memo"}, cfg())
    fast = assert_same(graph, snapshots=False)
    assert fast.turns[0].result == {"messages": "a memo and more"}


class Ledger(TypedDict, total=False):
    entries: Annotated[list, DeltaChannel(lambda state, batches: [*state, *chain_all(*batches)])]


def test_delta_channel_state_is_read_through_a_snapshot(saver: Any) -> None:
    """A ``DeltaChannel`` stores no value at most checkpoints (LangGraph rebuilds it from
    the thread's history): the fast reader cannot decode that state itself, so it asks
    ``get_state`` at the turn ends, and the trajectory is still the generic reader's."""

    def ask(state: Ledger) -> Ledger:
        return {"entries": [interrupt("amount?")]}

    builder = StateGraph(Ledger)
    builder.add_node("ask", ask)
    builder.add_node("book", lambda s: {"entries": ["booked"]})
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "book")
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"entries": ["open"]}, cfg())
    graph.invoke(Command(resume=12), cfg())
    fast = assert_same(graph)
    assert [t.state for t in fast.turns] == [
        {"entries": ["open"]},
        {"entries": ["open", 12, "booked"]},
    ]
    with pytest.raises(ExtractionError, match="get_state snapshot"):
        assert_same(graph, snapshots=False)


class _NothingMapped(dict):
    """Pretends the stdlib's SQLite maps no byte of any file."""

    def __getitem__(self, key: Any) -> int:
        return 0


def test_a_sqlite_file_past_the_mapped_size_is_read_by_the_helper_process(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past what Python's SQLite memory-maps (2 GiB), rows are read by a helper process
    whose SQLite (apsw) maps the whole file; it must give exactly the same rows."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from lg_eval.extract.fast import _sqlite as sqlite_module
    from lg_eval.extract.fast import _sqlite_helper as sqlite_helper

    assert sqlite_helper.available(), "apsw is a dependency of lg_eval"
    conn = sqlite3.connect(str(tmp_path / "big.sqlite"), check_same_thread=False)
    graph = SCENARIOS["weather"].played(SqliteSaver(conn))
    read: list[int] = []
    real = sqlite_helper.read_file

    def spy(file: str, thread_id: str) -> Any:
        found = real(file, thread_id)  # raises here if the helper fails
        read.append(len(found[0]))
        return found

    monkeypatch.setattr(sqlite_helper, "read_file", spy)
    monkeypatch.setattr(sqlite_module, "_mapped", _NothingMapped())
    fast = assert_same(graph, snapshots=False)
    assert read == [len(fast.lineage)]
    conn.close()


def test_a_short_sqlite_thread_is_read_in_one_pass(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest checkpoint of a short thread is small enough to be read whole with the
    rows, so the reader plans it without fetching it a second time."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from lg_eval.extract.fast import _sqlite as sqlite_module

    conn = sqlite3.connect(str(tmp_path / "short.sqlite"), check_same_thread=False)
    graph = build_agent(2, 0, SqliteSaver(conn))
    run_thread(graph, "t")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the newest checkpoint was fetched again")

    monkeypatch.setattr(sqlite_module, "stored", refuse)
    fast = assert_same(graph, snapshots=False)
    assert fast.to_graph_trajectory().steps == [
        ["__start__", "agent", "tools", "agent", "tools", "agent"]
    ]
    conn.close()


def test_sqlite_in_memory_database_and_large_checkpoints(tmp_path: Any) -> None:
    """SQLite rows read every way: ``:memory:`` (through the saver), a file with checkpoints
    larger than the blob I/O threshold, and ``versions_seen`` longer than the first tail read."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    names = [f"step_{i:02d}_with_a_long_enough_name" for i in range(40)]
    for target in (":memory:", str(tmp_path / "big.sqlite")):
        saver = SqliteSaver(sqlite3.connect(target, check_same_thread=False))
        graph = chain(*names, checkpointer=saver)
        graph.invoke({"log": ["x" * 40_000]}, cfg())
        assert len(assert_same(graph).turns[0].supersteps) == len(names) + 1


def test_update_writers_are_matched_or_verified(weather_graph: Any) -> None:
    """Writes ``update_state`` stores under a planned task's id name that task; under its own
    id they are verified as an update's; anything else stops the fast path."""
    from uuid import UUID, uuid5

    from lg_eval.extract.fast._naming import Naming
    from lg_eval.extract.fast._rows import CheckpointRow, FastPathUnavailable, WriteRow

    history = list(weather_graph.get_state_history(cfg()))
    at = next(s for s in history if [t.name for t in s.tasks] == ["agent"])
    cid = at.config["configurable"]["checkpoint_id"]
    row = CheckpointRow("", cid, None, 4, None, None, dict(at.metadata))
    planned_id = at.tasks[0].id
    update_id = str(uuid5(UUID(cid), "__interrupt__"))

    def plan(task_id: str, path: str = "~__interrupt__, 0000000000") -> list[str]:
        write = WriteRow("", cid, task_id, path, 0, "messages")
        return [t.name for t in Naming(weather_graph).planned(row, [write])]

    assert plan(planned_id) == ["agent"]
    assert plan(update_id) == []
    assert plan(str(uuid5(UUID(cid), "__input__")), "") == []
    with pytest.raises(FastPathUnavailable, match="neither a planned task nor an update"):
        plan("11111111-2222-3333-4444-555555555555")
    with pytest.raises(FastPathUnavailable, match="unexpected task path"):
        plan(planned_id, "~__pregel_push, not-a-number")
