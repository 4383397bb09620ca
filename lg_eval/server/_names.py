"""The names a server thread's history and runs record, for the graph-mismatch check.

A LangGraph Server gives no checkpoint's ``versions_seen`` or channel versions, which the
local readers check a graph against (:mod:`lg_eval.extract._mismatch`); what it does give
names the same things: each state's tasks and next nodes, the keys of its values, and the
nodes a run's ``Command(goto=...)`` went to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lg_eval.extract._mismatch import StoredNames
from lg_eval.extract._records import ROOT_NS


def stored_names(
    states: Mapping[str, list[dict[str, Any]]], thread_runs: list[dict[str, Any]]
) -> StoredNames:
    """The node and channel names the server's states record, per namespace: the names of
    their tasks and next nodes, the keys of their values, and the nodes the runs' commands
    went to (``Command(goto=...)``, which no state lists)."""
    names = StoredNames()
    for run in thread_runs:
        command = (run.get("kwargs") or {}).get("command") or {}
        gotos = [g for g in as_list(command.get("goto")) if isinstance(g, str)]
        names.seen(ROOT_NS, gotos, ())
    for ns, found in states.items():
        for state in found:
            tasks = [str(task.get("name")) for task in state.get("tasks") or ()]
            values = state.get("values")
            channels = values.keys() if isinstance(values, Mapping) else ()
            names.seen(ns, [*tasks, *(state.get("next") or ())], channels)
    return names


def as_list(value: Any) -> list[Any]:
    """``value`` as a list: None as none, a list or tuple as its items, else one item."""
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
