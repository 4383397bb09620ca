"""Refuse a graph that did not write the thread it is asked to read.

A checkpoint stores the names of the nodes that ran or were sent to, and of the
state channels they wrote: the keys of ``versions_seen`` (every task that ran,
``Send`` targets included), the ``branch:to:<node>`` channels of
``channel_versions`` and of the writes (the nodes an edge or a ``Command`` routed
to), the ``task_path`` of each write (``~__pregel_pull, <node>``, where the
storage keeps it), and the other channels of ``channel_versions`` and of the
writes. A graph that lacks one of those names, in the namespace it was stored in,
cannot have written the thread: LangGraph would plan other tasks from the same
checkpoints, and the trajectory read through it would silently drop or misname
steps. Both readers collect the names once per thread (:class:`StoredNames`) and
call :meth:`StoredNames.check` before they plan a single task, so the check costs
one pass over what they read anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lg_eval.errors import GraphMismatchError
from lg_eval.extract._functional import task_candidates
from lg_eval.extract._records import INTERRUPT, ROOT_NS, recast

BRANCH_TO = "branch:to:"
PULL_PATH = "~__pregel_pull, "
NOT_NODES = frozenset({INTERRUPT, "__input__", "__start__", "__copy__", "__end__"})
"""Keys of ``versions_seen`` that LangGraph uses for itself, not for nodes."""
RESERVED = ("__", BRANCH_TO)
"""Channels LangGraph keeps for itself (``__start__``, ``__pregel_tasks``, control writes)
and the branch channels, which name nodes: neither is a state channel to check."""


class StoredNames:
    """The node and channel names a thread's checkpoints store, per namespace without task
    ids."""

    __slots__ = ("by_key", "channels_by_key")

    def __init__(self) -> None:
        self.by_key: dict[str, set[str]] = {}
        self.channels_by_key: dict[str, set[str]] = {}

    def _names(self, ns: str) -> set[str]:
        key = recast(ns)
        found = self.by_key.get(key)
        if found is None:
            found = self.by_key[key] = set()
        return found

    def _channels(self, ns: str) -> set[str]:
        key = recast(ns)
        found = self.channels_by_key.get(key)
        if found is None:
            found = self.channels_by_key[key] = set()
        return found

    def checkpoint(self, ns: str, checkpoint: Mapping[str, Any]) -> None:
        """Take the names a stored checkpoint dict records (``versions_seen`` keys and
        ``branch:to:`` channels). Both are carried forward from parent to child, so a
        reader may give only the newest checkpoint of each branch."""
        names = self._names(ns)
        names.update(checkpoint.get("versions_seen") or ())
        channels = self._channels(ns)
        for channel in checkpoint.get("channel_versions") or ():
            if channel.startswith(BRANCH_TO):
                names.add(channel[len(BRANCH_TO) :])
            elif not channel.startswith(RESERVED):
                channels.add(channel)

    def writes(self, ns: str, writes: Iterable[tuple[str, str]]) -> None:
        """Take the names ``(task_path, channel)`` of a checkpoint's writes record (the task
        path may be ``""`` where the storage does not keep it)."""
        names, channels = self._names(ns), self._channels(ns)
        for task_path, channel in writes:
            if task_path.startswith(PULL_PATH):
                names.add(task_path[len(PULL_PATH) :])
            if channel.startswith(BRANCH_TO):
                names.add(channel[len(BRANCH_TO) :])
            elif not channel.startswith(RESERVED):
                channels.add(channel)

    def seen(self, ns: str, nodes: Iterable[str], channels: Iterable[str]) -> None:
        """Take node and state-channel names read some other way (a LangGraph Server's
        history lists each checkpoint's tasks, next nodes and values, not its versions)."""
        self._names(ns).update(nodes)
        self._channels(ns).update(c for c in channels if not c.startswith(RESERVED))

    def check(self, graph: Any, thread_id: str) -> None:
        """Raise :class:`GraphMismatchError` naming the stored names ``graph`` lacks, in the
        root graph or in the subgraph that owns a namespace. A namespace whose subgraph
        ``graph`` does not have is left to the reader (it warns that those steps are
        missing); its parent node's name is checked in the parent's namespace."""
        for key in sorted(self.by_key.keys() | self.channels_by_key.keys()):
            owner = graph if key == ROOT_NS else _subgraph(graph, key)
            if owner is None:
                continue
            missing(owner, thread_id, _lacking(owner, self.by_key.get(key, set())), key)
            channels = getattr(owner, "channels", None)
            if isinstance(channels, Mapping):
                lacking = self.channels_by_key.get(key, set()) - channels.keys()
                if lacking:
                    raise GraphMismatchError(
                        f"Thread {thread_id!r} was not written by this graph: its checkpoints "
                        f"record state channels {', '.join(repr(c) for c in sorted(lacking))}"
                        f"{_where(key)} that the graph does not have (its state: "
                        f"{', '.join(sorted(c for c in channels if not c.startswith(RESERVED)))}"
                        "). Pass the graph that ran the thread (another state schema gives a "
                        "wrong trajectory)."
                    )


def _subgraph(graph: Any, key: str) -> Any:
    try:
        return next((g for _, g in graph.get_subgraphs(namespace=key, recurse=True)), None)
    except Exception:  # not a Pregel graph, or LangGraph cannot resolve the namespace
        return None


def _lacking(graph: Any, names: set[str]) -> set[str]:
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, Mapping):
        return set()
    lacking = names - NOT_NODES - nodes.keys()
    if lacking:  # functional API: @task calls are recorded as tasks too
        lacking -= {call for entry in nodes for call in task_candidates(graph, entry)}
    return lacking


def _where(key: str) -> str:
    return "" if key == ROOT_NS else f" in subgraph {key!r}"


def missing(graph: Any, thread_id: str | None, names: set[str], key: str = ROOT_NS) -> None:
    """Raise :class:`GraphMismatchError` naming the stored node names ``graph`` lacks."""
    if not names:
        return
    known = ", ".join(sorted(n for n in graph.nodes if n not in NOT_NODES))
    thread = "The thread" if thread_id is None else f"Thread {thread_id!r}"
    where = _where(key)
    raise GraphMismatchError(
        f"{thread} was not written by this graph: its checkpoints record nodes "
        f"{', '.join(repr(n) for n in sorted(names))}{where} that the graph does not have "
        f"(its nodes: {known}). Pass the graph that ran the thread (a renamed node or "
        "another graph gives a wrong trajectory)."
    )
