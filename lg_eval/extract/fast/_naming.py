"""Name the tasks of a checkpoint from their ids, as LangGraph derived them.

LangGraph gives every task it plans a deterministic id, a hash of the
checkpoint id, the namespace, the step, the node name and the task's path
(``langgraph.pregel._algo.prepare_single_task``):

* a PULL task (a node triggered by its channels) hashes the sorted trigger
  channels of the node;
* a PUSH task (a ``Send``) hashes the index of its packet in the step's
  ``Send`` list, which the stored ``task_path`` column carries;
* ``update_state`` may store writes under the id of a planned task (it reuses
  them), with a ``task_path`` of its own, so those ids are matched against
  every node's PULL id.

A writer whose path names a node but whose id matches no hash stops the fast
path: a name is never guessed. Functional-API ``@task`` calls are left to
:func:`lg_eval.extract._functional.resolve_calls`, as in the generic reader.
"""

from __future__ import annotations

import binascii
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any
from uuid import UUID, uuid5

from langgraph.channels.untracked_value import UntrackedValue
from langgraph.pregel._algo import _xxhash_str  # internal: version-pinned
from langgraph.types import PregelTask

from lg_eval.extract._mismatch import missing
from lg_eval.extract._records import NS_SEP, NULL_TASK_ID, PULL, PUSH, recast
from lg_eval.extract._subgraphs import AGENT, namespace_graph
from lg_eval.extract.fast._rows import (
    PULL_PREFIX,
    PUSH_PREFIX,
    UPDATE_PREFIX,
    CheckpointRow,
    FastPathUnavailable,
    WriteRow,
    require,
)

INPUT = "__input__"
_NAMESPACES_KEPT = 4096
"""Namespaces whose node set :class:`Naming` remembers: a subgraph's namespace carries its
task id, so a long-lived graph sees a new one per subgraph run."""


def task_hash(checkpoint: bytes, *parts: str | bytes) -> str:
    """LangGraph's task id for ``parts`` at a (format v2+) checkpoint whose id is
    ``checkpoint`` (as bytes: see :func:`id_bytes`). LangGraph hashes the parts
    concatenated, so parts may come pre-joined as bytes (were that to change, ids would
    stop matching and the fast path would give way, never misname a task)."""
    return _xxhash_str(checkpoint, *parts)


def id_bytes(checkpoint_id: str) -> bytes:
    return binascii.unhexlify(checkpoint_id.replace("-", ""))


def held(graph: Any) -> Callable[[], Any]:
    """``graph`` referred to weakly where it can be: a :class:`Naming` is kept per compiled
    graph in a ``WeakKeyDictionary`` (:func:`~lg_eval.extract.fast._rows.kept_per_graph`),
    which would keep the graph alive for ever if its value held it (a run whose target is a
    factory builds a graph per case: about 100 KiB each)."""
    try:
        return weakref.ref(graph)
    except TypeError:  # not weakly referenceable: not kept per graph either
        return lambda: graph


@dataclass(frozen=True)
class NodeSet:
    """The nodes of the graph that owns a namespace, in LangGraph's planning order."""

    graph_ref: Callable[[], Any]
    """The graph, held weakly (see :func:`held`)."""
    order: dict[str, int]
    triggers: dict[str, tuple[str, ...]]
    untracked: bool
    """Whether the graph has ``UntrackedValue`` channels: a task writing only to them stores
    no write at all, so its checkpoints cannot be read from writes alone."""
    pull_tail: dict[str, bytes] = field(default_factory=dict)
    """Per node, the hashed parts of its PULL id after the step, joined (see :func:`task_hash`)."""
    push_guess: list[str] = field(default_factory=list)
    """The node the latest ``Send`` id matched, tried first (a graph's ``Send`` packets
    usually go to one node; every name is tried after it)."""

    @property
    def graph(self) -> Any:
        """The graph (alive while its thread is read: the reader holds the root graph,
        which holds its subgraphs)."""
        return self.graph_ref()


class Naming:
    """Plans of the tasks at each checkpoint of one thread, from write rows only."""

    def __init__(self, root: Any) -> None:
        self._root = held(root)
        self._graphs: dict[tuple[str, str | None], NodeSet] = {}
        self._by_ns: dict[str, NodeSet] = {}

    @property
    def root(self) -> Any:
        """The root graph (held weakly, see :func:`held`)."""
        return self._root()

    def nodes(self, ns: str, agent: str | None = None) -> NodeSet:
        """The graph whose nodes a namespace's checkpoints plan: the subgraph that wrote them
        (:func:`~lg_eval.extract._subgraphs.namespace_graph`; ``agent``: the
        ``lc_agent_name`` they record), else the root graph, as ``get_state`` picks it."""
        found = self._by_ns.get(ns)
        if found is None:
            if len(self._by_ns) >= _NAMESPACES_KEPT:  # subgraph namespaces differ per run
                self._by_ns.clear()
            found = self._by_ns[ns] = self._nodes(recast(ns), agent)
        return found

    def _nodes(self, key: str, agent: str | None) -> NodeSet:
        if (key, agent) not in self._graphs:
            root = self.root
            graph = (namespace_graph(root, key, agent) or root) if key else root
            nodes = getattr(graph, "nodes", None)
            if not isinstance(nodes, dict):
                raise FastPathUnavailable(f"graph for namespace {key!r} has no Pregel nodes")
            triggers = {name: tuple(sorted(node.triggers)) for name, node in nodes.items()}
            self._graphs[(key, agent)] = NodeSet(
                graph_ref=held(graph),
                order={name: i for i, name in enumerate(nodes)},
                triggers=triggers,
                untracked=any(
                    isinstance(c, UntrackedValue) for c in getattr(graph, "channels", {}).values()
                ),
                pull_tail={n: "".join((n, PULL, *t)).encode() for n, t in triggers.items()},
            )
        return self._graphs[(key, agent)]

    def planned(self, row: CheckpointRow, writes: Iterable[WriteRow]) -> list[PregelTask]:
        """The tasks planned at ``row`` that recorded writes, in LangGraph's order."""
        nodes = self.nodes(row.ns, row.metadata.get(AGENT))
        step = str(row.metadata.get("step", -1) + 1)
        checkpoint = id_bytes(row.id)
        paths: dict[str, set[str]] = {}
        for write in writes:
            if write.task_id != NULL_TASK_ID:
                paths.setdefault(write.task_id, set()).add(write.task_path)
        push: list[tuple[int, PregelTask]] = []
        pull: list[tuple[int, PregelTask]] = []
        pull_ids: dict[str, str] | None = None
        for task_id, task_paths in paths.items():
            found = None
            for path in task_paths:
                found = found or self._from_path(checkpoint, row.ns, nodes, step, task_id, path)
            if found is None and any(_is_update(p) for p in task_paths):
                if pull_ids is None:  # update_state reuses the ids of planned tasks
                    pull_ids = {
                        _pull_id(checkpoint, row.ns, nodes, step, n): n for n in nodes.order
                    }
                if task_id in pull_ids:
                    found = (PULL, pull_ids[task_id])
                else:
                    require(
                        any(task_id == _update_id(row.id, p) for p in task_paths),
                        f"update_state writer {task_id} is neither a planned task nor an update",
                    )
            if found is None:
                continue  # an update's own id, or a functional-API call
            kind, key = found
            if kind == PULL:
                task = PregelTask(task_id, key, (PULL, key))
                pull.append((nodes.order[key], task))
            else:
                index, name = key
                push.append((index, PregelTask(task_id, name, (PUSH, index, False))))
        if len(push) > 1:
            push.sort(key=itemgetter(0))
        if len(pull) > 1:
            pull.sort(key=itemgetter(0))
        return [t for _, t in push] + [t for _, t in pull] if push else [t for _, t in pull]

    def _from_path(
        self, checkpoint: bytes, ns: str, nodes: NodeSet, step: str, task_id: str, path: str
    ) -> tuple[str, Any] | None:
        if path.startswith(PULL_PREFIX):
            name = path[len(PULL_PREFIX) :]
            if name not in nodes.order:
                if not ns:  # the root graph is the one given: it did not write the thread
                    missing(self.root, None, {name})
                raise FastPathUnavailable(f"task path names unknown node {name!r}")
            if _pull_id(checkpoint, ns, nodes, step, name) != task_id:
                raise FastPathUnavailable(f"task {task_id} does not hash as node {name!r}")
            return PULL, name
        if path.startswith(PUSH_PREFIX) and not path.startswith(PUSH_PREFIX + "~"):
            index = _index(path[len(PUSH_PREFIX) :])
            guess = nodes.push_guess
            for name in (guess[0], *nodes.order) if guess else nodes.order:
                if task_hash(checkpoint, _ns(ns, name), f"{step}{name}{PUSH}{index}") == task_id:
                    guess[:] = [name]
                    return PUSH, (index, name)
            raise_unnamed(task_id, path, ns)
        if not (path == "" or _is_update(path) or path.startswith(PUSH_PREFIX + "~")):
            raise FastPathUnavailable(f"unexpected task path {path!r}")
        return None


def _pull_id(checkpoint: bytes, ns: str, nodes: NodeSet, step: str, name: str) -> str:
    return task_hash(checkpoint, _ns(ns, name), step, nodes.pull_tail[name])


def _update_id(checkpoint_id: str, path: str) -> str | None:
    """The id ``update_state`` gives its writes when no planned task's id is reused
    (``langgraph.pregel.main._update_task_id``, and ``uuid5(id, "__input__")`` as input)."""
    if path == "":
        return str(uuid5(UUID(checkpoint_id), INPUT))
    if not path.startswith(UPDATE_PREFIX):
        return None
    i = _index(path[len(UPDATE_PREFIX) :].lstrip(", "))
    return str(uuid5(UUID(checkpoint_id), UPDATE_PREFIX[1:] + (f":{i}" if i else "")))


def _index(text: str) -> int:
    """The leading index of a task path's remainder (``"0000000002, 0000000000"`` -> 2)."""
    first = text.split(", ")[0]
    if not first.isdigit():
        raise FastPathUnavailable(f"unexpected task path fragment {text!r}")
    return int(first)


class UnnamedSend(FastPathUnavailable):
    """A ``Send`` task whose id hashes as no node of the graph that owns its namespace (at
    the root: maybe the graph did not write the thread, which the reader then checks)."""

    def __init__(self, reason: str, ns: str) -> None:
        super().__init__(reason)
        self.ns = ns


def raise_unnamed(task_id: str, path: str, ns: str = "") -> None:
    raise UnnamedSend(f"Send task {task_id} ({path}) matches no node", ns)


def _ns(parent_ns: str, name: str) -> str:
    return f"{parent_ns}{NS_SEP}{name}" if parent_ns else name


def _is_update(path: str) -> bool:
    return path == "" or path.startswith(UPDATE_PREFIX)
