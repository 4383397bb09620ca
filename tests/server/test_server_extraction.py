"""A thread played on a real LangGraph Server extracts as the same run does locally.

Each scenario of ``graphs/`` is played twice with the same script: locally through an
InMemorySaver, and on ``langgraph dev`` through LangGraph's ``RemoteGraph``. The two
trajectories must be equal once the ids and timestamps each side generates are replaced,
in order of first appearance, by placeholders.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_sync_client

from graphs.scenarios import EVERY_SCENARIO, Scenario, drive
from lg_eval import extract_thread
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.server import aextract_server_thread, extract_server_thread
from tests.server.proxy import proxying

_GENERATED = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\b[0-9a-f]{32}\b"
    r"|\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)?"
)

UNTOLD = {
    "functional": "functional-API @task calls (their writes are not in the history)",
    "time_travel": "time travel (a run from an earlier checkpoint)",
    "breakpoint_time_travel": "time travel (a run from an earlier checkpoint)",
    "subgraph_breakpoint_time_travel": "time travel (a run from an earlier checkpoint)",
}
"""Scenarios whose server history does not (yet) restate to the local records."""


def anonymous(trajectory: ThreadTrajectory) -> Any:
    """The trajectory as JSON, generated ids and timestamps numbered by first appearance."""
    seen: dict[str, str] = {}
    text = json.dumps(trajectory.model_dump(mode="json"), sort_keys=True, default=str)
    return json.loads(_GENERATED.sub(lambda m: seen.setdefault(m[0], f"<{len(seen)}>"), text))


def _call(graph: Any, payload: Any, config: Any) -> Any:
    """``invoke`` on the RemoteGraph; a failing run's RemoteException stands for the
    exception the scenario expects (the server reports its type by name)."""
    try:
        return graph.invoke(payload, config)
    except Exception as exc:
        name = getattr(exc, "args", [{}])[0]
        if isinstance(name, dict) and "error" in name:
            raise _named(name["error"]) from exc
        raise


def _named(error: str) -> Exception:
    for scenario in EVERY_SCENARIO.values():
        for turn in scenario.turns:
            if turn.raises is not None and turn.raises.__name__ == error:
                return turn.raises(error)
    return RuntimeError(error)


def _local(scenario: Scenario) -> ThreadTrajectory:
    thread_id = str(uuid.uuid4())
    graph = scenario.played(InMemorySaver(), thread_id)
    return extract_thread(graph, {"configurable": {"thread_id": thread_id}})


def _on_server(url: str, scenario: Scenario) -> str:
    thread_id = str(uuid.uuid4())
    get_sync_client(url=url).threads.create(thread_id=thread_id)
    drive(RemoteGraph(scenario.name, url=url), thread_id, scenario.turns, call=_call)
    return thread_id


def _params() -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.xfail(reason=UNTOLD[name], strict=True))
        if name in UNTOLD
        else name
        for name in EVERY_SCENARIO
    ]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", _params())
def test_server_thread_extracts_equal_to_local(server_url: str, name: str) -> None:
    scenario = EVERY_SCENARIO[name]
    thread_id = _on_server(server_url, scenario)
    remote = extract_server_thread(server_url, thread_id, graph=scenario.build())
    assert anonymous(remote) == anonymous(_local(scenario))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["hitl_agent", "subgraph_calls", "nested_subgraph_calls"])
async def test_async_extraction_equals_sync(server_url: str, name: str) -> None:
    scenario = EVERY_SCENARIO[name]
    thread_id = _on_server(server_url, scenario)
    graph = scenario.build()
    awaited = await aextract_server_thread(server_url, thread_id, graph=graph)
    assert awaited == extract_server_thread(server_url, thread_id, graph=graph)
    assert anonymous(awaited) == anonymous(_local(scenario))


# Namespaces LangGraph writes (see an InMemorySaver's list) and the chains of numbered calls
# read until one is empty: subgraph_calls writes batch:<id>, |1, |2 (one chain);
# nested_subgraph_calls writes rounds:<id>, |1, and two batch calls under each (three chains).
HISTORY_REQUESTS = {"hitl_agent": 1, "subgraph_calls": 1 + 3 + 1, "nested_subgraph_calls": 7 + 3}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(HISTORY_REQUESTS))
def test_each_call_namespace_is_read_once_and_each_chain_ends_at_one_empty_read(
    server_url: str, name: str
) -> None:
    scenario = EVERY_SCENARIO[name]
    thread_id = _on_server(server_url, scenario)
    with proxying(server_url) as proxy:
        extract_server_thread(proxy.url, thread_id, graph=scenario.build())
    paths = [path for _, path, _ in proxy.seen]
    assert paths.count(f"/threads/{thread_id}/history") == HISTORY_REQUESTS[name]
