"""The compiled graph that wrote a subgraph namespace, also where LangGraph cannot name it.

LangGraph finds a namespace's subgraph among the nodes it declares and the graphs a node's
function refers to (``get_subgraphs``). A graph invoked deeper inside a node — a deepagents
subagent that the ``task`` tool of a ``ToolNode`` invokes, any graph a tool calls — is not
found, and LangGraph's ``get_state`` then reads that namespace with the *root* graph's
nodes: the names of what ran come out wrong wherever the two graphs differ. Here the
search goes on from the namespace's owning node through what it holds (tools, their
functions, the variables those close over, containers) to the compiled graphs it can
reach; the one a namespace's checkpoints name in their metadata (``lc_agent_name``, which
``create_agent`` records) is taken, or the only one found. Nothing found: ``None``, and the
readers keep LangGraph's own choice.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from types import FunctionType, MethodType, ModuleType
from typing import Any
from weakref import WeakKeyDictionary

from lg_eval.extract._records import NS_SEP, recast

AGENT = "lc_agent_name"
"""The metadata key under which ``create_agent`` records the agent a checkpoint belongs to."""
_SEARCHED = 2000
"""Objects visited at most per search (a node holds a few tools and closures, not more)."""
_found: WeakKeyDictionary[Any, dict[str, list[Any]]] = WeakKeyDictionary()


def declared_subgraph(graph: Any, key: str) -> Any | None:
    """The subgraph LangGraph itself finds for a namespace key (``a|b``, no task ids)."""
    try:
        return next((g for _, g in graph.get_subgraphs(namespace=key, recurse=True)), None)
    except Exception:  # not a Pregel graph, or LangGraph cannot resolve the namespace
        return None


def namespace_graph(graph: Any, ns: str, agent: str | None = None) -> Any | None:
    """The compiled graph whose nodes planned the checkpoints of namespace ``ns`` (the root
    graph for ``""``); ``agent`` is the ``lc_agent_name`` its checkpoints record, if any.
    ``None`` when neither LangGraph nor the search below finds one."""
    key = recast(ns)
    if not key:
        return graph
    declared = declared_subgraph(graph, key)
    if declared is not None:
        return declared
    candidates = invoked_graphs(graph, key)
    if agent is not None:
        named = [c for c in candidates if getattr(c, "name", None) == agent]
        if len(named) == 1:
            return named[0]
    return candidates[0] if len(candidates) == 1 else None


def invoked_graphs(graph: Any, key: str) -> list[Any]:
    """The compiled graphs the node owning namespace key ``key`` can invoke, found by
    walking what the node holds (kept per graph and key)."""
    try:
        known = _found.get(graph)
        if known is None:
            known = _found[graph] = {}
    except TypeError:  # not weakly referenceable
        known = {}
    found = known.get(key)
    if found is None:
        parent_key, _, name = key.rpartition(NS_SEP)
        parent = namespace_graph(graph, parent_key) if parent_key else graph
        nodes = getattr(parent, "nodes", None)
        node = nodes.get(name) if isinstance(nodes, Mapping) else None
        reached = _reachable_graphs(getattr(node, "bound", None))
        found = known[key] = [g for g in reached if g is not graph and g is not parent]
    return found


def snapshot_source(
    graph: Any, saver: Any, ns: str, agent: str | None = None
) -> tuple[Any, dict[str, Any]]:
    """The graph to ask for a namespace's snapshots (``get_state``, ``get_state_history``)
    and the ``configurable`` keys to add: the root graph, which delegates to the subgraphs
    it knows, or a subgraph only the search found, lent the thread's checkpointer as
    LangGraph lends it to the subgraphs it delegates to."""
    key = recast(ns)
    if not key or declared_subgraph(graph, key) is not None:
        return graph, {}
    found = namespace_graph(graph, ns, agent)
    if found is None:
        return graph, {}
    from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER  # version-checked

    return found, {CONFIG_KEY_CHECKPOINTER: saver}


def _reachable_graphs(start: Any) -> list[Any]:
    """Compiled graphs reachable from ``start`` through runnables, tools, functions (their
    closures and the globals they name), bound methods and containers, in the order met."""
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langgraph.pregel import Pregel

    found: list[Any] = []
    seen: set[int] = set()
    queue = [start]
    while queue and len(seen) < _SEARCHED:
        item = queue.pop(0)
        if item is None or id(item) in seen or isinstance(item, str | bytes | int | float):
            continue
        seen.add(id(item))
        if isinstance(item, Pregel):
            if item is not start and item.checkpointer is not False:
                found.append(item)
            continue
        if isinstance(item, Mapping):
            queue.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            queue.extend(item)
        elif isinstance(item, MethodType):
            queue.extend((item.__self__, item.__func__))
        elif isinstance(item, FunctionType):
            queue.extend(_referenced(item))
        elif isinstance(item, Runnable | BaseTool):
            queue.extend(vars(item).values())
    return found


def _referenced(function: FunctionType) -> list[Any]:
    """What a function's code can reach: the variables it closes over and the globals it
    names (modules and classes left out)."""
    try:
        names = inspect.getclosurevars(function)
    except (TypeError, ValueError):
        return []
    values = [*names.nonlocals.values(), *names.globals.values()]
    return [v for v in values if not isinstance(v, ModuleType | type)]
