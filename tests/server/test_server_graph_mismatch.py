"""A graph that did not write a server thread is refused, as every local reader refuses it.

Each scenario is played on ``langgraph dev`` and locally (where LangGraph's ``tasks``
stream says which nodes ran, per namespace). The server thread is then read with the
scenario's graph rebuilt with one node renamed: where the thread was written under that
node's name and the server lists it (a task or a next node of one of its states, or a
run's ``Command(goto=...)``), the reading raises :class:`GraphMismatchError` naming it;
where it never ran, the renamed graph reads the thread exactly as the original does. A
join node (``add_edge([a, b], c)``) that ran is not listed by the server at all: the
reader restates it from the graph it is given, so the renamed name is what the trajectory
shows (docs/deployed.md, "What the server API cannot tell").
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_sync_client

from graphs.scenarios import EVERY_SCENARIO
from lg_eval.errors import GraphMismatchError
from lg_eval.server import extract_server_thread
from tests.extract.test_graph_mismatch import (
    SUBGRAPH_SCENARIOS,
    played,
    renamed,
    stored_namespaces,
)
from tests.server.test_server_extraction import UNTOLD, _on_server

ROOT_SCENARIOS = sorted(
    name
    for name, spec in EVERY_SCENARIO.items()
    if name not in UNTOLD and hasattr(spec.build(), "builder")
)


def outcome(url: str, thread_id: str, graph: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return extract_server_thread(url, thread_id, graph=graph).model_dump()
        except GraphMismatchError as exc:
            return exc


def listed(url: str, thread_id: str) -> set[str]:
    """The node names the server lists for the thread: the tasks and next nodes of its
    root history's states, and the nodes its runs' ``Command(goto=...)`` went to."""
    client = get_sync_client(url=url)
    history = client.threads.get_history(thread_id, limit=1000)
    names = {str(task["name"]) for state in history for task in state["tasks"]}
    names |= {str(name) for state in history for name in state["next"]}
    for run in client.runs.list(thread_id, limit=1000):
        goto = ((run.get("kwargs") or {}).get("command") or {}).get("goto")
        names |= {g for g in (goto if isinstance(goto, list) else [goto]) if isinstance(g, str)}
    return names


def steps(trajectory: dict[str, Any]) -> set[str]:
    return {
        task["name"]
        for turn in trajectory["turns"]
        for step in turn["supersteps"]
        for task in step["tasks"]
    }


@pytest.mark.parametrize("scenario", ROOT_SCENARIOS)
def test_renaming_a_node_that_wrote_the_thread_is_refused(server_url: str, scenario: str) -> None:
    spec = EVERY_SCENARIO[scenario]
    _, ran = played(spec, InMemorySaver())
    thread_id = _on_server(server_url, spec)
    graph = spec.build()
    original = outcome(server_url, thread_id, graph)
    assert not isinstance(original, Exception)
    shown = listed(server_url, thread_id)
    for node in graph.builder.nodes:
        found = outcome(server_url, thread_id, renamed(graph, node, f"{node}_renamed"))
        if node in ran[""] and node in shown:
            assert isinstance(found, GraphMismatchError), node
            assert f"record nodes {node!r} that the graph does not have" in str(found)
        elif node in ran[""]:  # a join the server does not list: restated by the graph given
            assert f"{node}_renamed" in steps(found) and node not in steps(found), node
        else:
            assert found == original, node


@pytest.mark.parametrize("scenario", SUBGRAPH_SCENARIOS)
def test_renaming_a_subgraph_node_that_wrote_the_thread_is_refused(
    server_url: str, scenario: str
) -> None:
    spec = EVERY_SCENARIO[scenario]
    saver = InMemorySaver()
    _, ran = played(spec, saver)
    stored = stored_namespaces(saver)
    thread_id = _on_server(server_url, spec)
    graph = spec.build()
    original = outcome(server_url, thread_id, graph)
    subgraphs = [n for n, s in graph.builder.nodes.items() if hasattr(s.runnable, "builder")]
    assert subgraphs
    for inside in subgraphs:
        for node in graph.builder.nodes[inside].runnable.builder.nodes:
            found = outcome(server_url, thread_id, renamed(graph, node, "x", inside=inside))
            if node in ran[inside] and inside in stored:
                assert isinstance(found, GraphMismatchError), (inside, node)
                assert f"record nodes {node!r} in subgraph {inside!r}" in str(found)
            else:
                assert found == original, (inside, node)


def test_a_graph_with_another_state_is_refused(server_url: str) -> None:
    spec = EVERY_SCENARIO["hitl_agent"]
    thread_id = _on_server(server_url, spec)
    other = EVERY_SCENARIO["functional"].build()  # no "messages" channel
    with pytest.raises(GraphMismatchError) as raised:
        extract_server_thread(server_url, thread_id, graph=other)
    assert f"Thread {thread_id!r} was not written by this graph" in str(raised.value)
