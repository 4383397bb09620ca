"""A LangGraph Server thread as checkpoint records, for the one trajectory assembler.

The server's threads API gives, per checkpoint of every namespace, the tasks LangGraph
planned there with their interrupts (ids and payloads), errors and results, and each
run's input or ``Command``. It does not give the stored control writes a local reader
sees, so this module restates them from what it does give, in LangGraph's own
vocabulary, and hands them to :func:`lg_eval.extract._generic.build_record`, the same
function the local readers use:

- a task with a ``result`` finished (its result holds its state writes);
- each run's ``Command(resume=...)`` answers the interrupt pending at the checkpoint the
  run started from (by id for an id-keyed resume), as the ``__resume__`` writes of the
  task that raised it, and the newest one as the checkpoint's null-task resume, with the
  ``goto`` and ``update`` of the Command;
- a run that resumed at a checkpoint marks the next checkpoint as resumed
  (``versions_seen['__interrupt__']``), which tells a static breakpoint's stop;
- an ``update_state`` whose writes no planned task holds is restated from the values
  it changed (appended items only, for list channels).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Interrupt

from lg_eval._effects import Core
from lg_eval.extract._generic import StoredFields, build_record, goto_tasks
from lg_eval.extract._records import (
    ERROR,
    INTERRUPT,
    NS_SEP,
    NULL_TASK_ID,
    PULL,
    RESUME,
    RETURN,
    ROOT_NS,
    RUN_SOURCES,
    Breakpoints,
    CheckpointRecord,
    PlanSource,
    ThreadRecords,
    planned_by_name,
    recast,
)
from lg_eval.extract._selection import choose_tip, group_by_namespace
from lg_eval.server._connection import ServerConnection, request
from lg_eval.server._names import as_list, stored_names

PAGE = 1000
UPDATE_TASK = "update_state"
"""Task id given to the writes of an ``update_state`` no planned task holds."""


@dataclass(slots=True)
class _Planned:
    id: str
    name: str
    result: Any
    path: tuple[Any, ...]


def _get_history(thread_id: str, kwargs: dict[str, Any], client: Any) -> Any:
    """One page of history (the SDK's sync and async clients share the signature)."""
    return client.threads.get_history(thread_id, **kwargs)


def _list_runs(thread_id: str, offset: int, client: Any) -> Any:
    """One page of runs (either client)."""
    return client.runs.list(thread_id, limit=PAGE, offset=offset)


def history(server: ServerConnection, thread_id: str, ns: str) -> Core[list[dict[str, Any]]]:
    """Every checkpoint of one namespace of the thread, newest first (paged)."""
    states: list[dict[str, Any]] = []
    before: dict[str, Any] | None = None
    checkpoint = {"checkpoint_ns": ns}
    while True:
        kwargs = {"limit": PAGE, "before": before, "checkpoint": checkpoint}
        call = partial(_get_history, thread_id, kwargs)
        what = f"the history of thread {thread_id!r}"
        page = yield from request(server, what, call, call, thread_id=thread_id, shape="list")
        states.extend(page)
        if len(page) < PAGE:
            return states
        before = page[-1]["checkpoint"]


def runs(server: ServerConnection, thread_id: str) -> Core[list[dict[str, Any]]]:
    """Every run of the thread, oldest first (paged)."""
    found: list[dict[str, Any]] = []
    while True:
        call = partial(_list_runs, thread_id, len(found))
        what = f"the runs of thread {thread_id!r}"
        page = yield from request(server, what, call, call, thread_id=thread_id, shape="list")
        found.extend(page)
        if len(page) < PAGE:
            return sorted(found, key=lambda r: (str(r.get("created_at")), r["run_id"]))


def read_server(
    server: ServerConnection, thread_id: str, checkpoint_id: str | None, graph: Any = None
) -> Core[ThreadRecords]:
    """Read a server thread into :class:`ThreadRecords` (``graph``, when given, names the
    static breakpoints and the functional API's calls, as for a local thread)."""
    states: dict[str, list[dict[str, Any]]] = {}
    asked: set[str] = set()
    pending = [ROOT_NS]
    while pending:
        ns = pending.pop()
        if ns in asked:
            continue
        asked.add(ns)
        found = yield from history(server, thread_id, ns)
        if not found and ns != ROOT_NS:
            continue
        states[ns] = found
        if ns != ROOT_NS:
            pending.append(_next_call(ns))
        for state in found:
            for task in state.get("tasks") or ():
                sub = (task.get("checkpoint") or {}).get("checkpoint_ns")
                if sub and sub not in asked:
                    pending.append(sub)
    thread_runs = yield from runs(server, thread_id)
    return restate(graph, thread_id, checkpoint_id, states, thread_runs)


def _next_call(ns: str) -> str:
    """The namespace of the next call of the subgraph that wrote ``ns``.

    A node that invokes subgraphs more than once gives its first call the namespace its
    task names (``node:<task id>``) and each later one that namespace with the call's
    number appended (``node:<task id>|1``, ``|2``, ...: LangGraph's ``subgraph_counter``),
    and the history lists only the first. The calls are numbered in order, so the next
    is read only after the one before it held checkpoints: a chain ends at its first
    empty read (a call whose subgraph keeps no checkpoints ends it too)."""
    base, sep, number = ns.rpartition(NS_SEP)
    if sep and number.isdigit():
        return f"{base}{NS_SEP}{int(number) + 1}"
    return f"{ns}{NS_SEP}1"


def restate(
    graph: Any,
    thread_id: str,
    checkpoint_id: str | None,
    states: Mapping[str, list[dict[str, Any]]],
    thread_runs: list[dict[str, Any]],
) -> ThreadRecords:
    """The records of a thread, from its server states per namespace and its runs.

    Raises:
        GraphMismatchError: ``graph`` lacks a node the history's tasks or next nodes or a
            run's ``Command(goto=...)`` name, or a state channel its values hold, in the
            namespace they were read in (the one check every reader makes,
            :mod:`lg_eval.extract._mismatch`).
    """
    if graph is not None:
        stored_names(states, thread_runs).check(graph, thread_id)
    flat = [s for ns_states in states.values() for s in ns_states]
    _restate_joins(graph, states.get(ROOT_NS, []))
    by_id = {_id(s): s for s in flat}
    writes: dict[str, list[tuple[str, str, Any]]] = {_id(s): _task_writes(s) for s in flat}
    _restate_resumes(states.get(ROOT_NS, []), flat, thread_runs, writes)
    _restate_gotos(graph, states.get(ROOT_NS, []), thread_runs, writes)
    _restate_updates(states, by_id, writes)
    resumed = _resumed_at(flat, thread_runs)
    by_name = planned_by_name(
        PlanSource(
            _id(s),
            (s.get("parent_checkpoint") or {}).get("checkpoint_id"),
            (s.get("metadata") or {}).get("source"),
            (s.get("metadata") or {}).get("step"),
            (s.get("metadata") or {}).get("source") in RUN_SOURCES,
        )
        for s in flat
    )
    warnings: list[str] = []
    records: list[CheckpointRecord] = []
    for state in flat:
        record = _record(graph, state, writes[_id(state)], resumed, by_name, warnings)
        records.append(record)
    by_ns = group_by_namespace(records, thread_id)
    for ns_records in by_ns.values():
        ns_records.sort(key=lambda r: r.id, reverse=True)
    tip = choose_tip(by_ns, thread_id, checkpoint_id)
    return ThreadRecords(thread_id=thread_id, by_ns=by_ns, tip_id=tip, warnings=warnings)


def _id(state: Mapping[str, Any]) -> str:
    return str(state["checkpoint"]["checkpoint_id"])


def _ns(state: Mapping[str, Any]) -> str:
    return str(state["checkpoint"].get("checkpoint_ns") or ROOT_NS)


def _task_writes(state: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    out: list[tuple[str, str, Any]] = []
    for task in state.get("tasks") or ():
        tid = task["id"]
        if task.get("interrupts"):
            found = [Interrupt(value=i.get("value"), id=i.get("id")) for i in task["interrupts"]]
            out.append((tid, INTERRUPT, found))
        if task.get("error"):
            out.append((tid, ERROR, task["error"]))
        result = task.get("result")
        if result is None:
            continue
        if isinstance(result, dict) and task["name"] != "__start__":
            items = [(k, w) for k, v in result.items() for w in _each(k, v)]
            out.extend((tid, k, v) for k, v in items)
            if not items:
                out.append((tid, RETURN, None))
        else:
            out.append((tid, RETURN, result))
    return out


def _each(key: str, value: Any) -> list[Any]:
    """LangGraph folds a task's repeated writes to one channel into ``{'$writes': [...]}``."""
    if isinstance(value, dict) and set(value) == {"$writes"}:
        return list(value["$writes"])
    return [value]


def _leaf_tasks(states: Iterable[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Any]]:
    """``(state, task)`` of tasks that raised their interrupts themselves (a subgraph
    node's task carries its subgraph's interrupts too, but does not consume answers)."""
    return [
        (s, t)
        for s in states
        for t in s.get("tasks") or ()
        if t.get("interrupts") and not t.get("checkpoint")
    ]


def _root_anchor(state: Mapping[str, Any]) -> str:
    if _ns(state) == ROOT_NS:
        return _id(state)
    return str((state.get("metadata") or {}).get("parents", {}).get(ROOT_NS, ""))


def _started_at(run: Mapping[str, Any], root: list[dict[str, Any]]) -> str | None:
    """The root checkpoint a run started from: the one it names, else the newest one made
    before it (runs on one thread run one at a time)."""
    kwargs = run.get("kwargs") or {}
    named = kwargs.get("checkpoint_id") or (kwargs.get("checkpoint") or {}).get("checkpoint_id")
    if named:
        return str(named)
    created = str(run.get("created_at"))
    before = [
        s
        for s in root
        if (s.get("metadata") or {}).get("run_id") != run["run_id"]
        and str(s.get("created_at")) < created
    ]
    return max((_id(s) for s in before), default=None)


def _restate_resumes(
    root: list[dict[str, Any]],
    flat: list[dict[str, Any]],
    thread_runs: list[dict[str, Any]],
    writes: dict[str, list[tuple[str, str, Any]]],
) -> None:
    leaves = _leaf_tasks(flat)
    answers: dict[tuple[str, str], list[Any]] = {}
    for run in thread_runs:
        command = (run.get("kwargs") or {}).get("command") or {}
        if not command:
            continue
        start = _started_at(run, root)
        if start is None:
            continue
        null = writes.setdefault(start, [])
        null[:] = [w for w in null if w[0] != NULL_TASK_ID]
        for goto in as_list(command.get("goto")):
            if isinstance(goto, str):
                null.append((NULL_TASK_ID, f"branch:to:{goto}", "__start__"))
        resume = command.get("resume")
        update = command.get("update")
        if resume is not None:
            null.append((NULL_TASK_ID, RESUME, resume))
        for key, value in (update or {}).items() if isinstance(update, dict) else ():
            null.append((NULL_TASK_ID, key, value))
        if resume is None:
            continue
        under = [(s, t) for s, t in leaves if _root_anchor(s) == start] or _edited_pause(
            start, flat, leaves
        )
        if _is_map(resume, under):
            for s, t in under:
                iid = t["interrupts"][-1].get("id")
                if iid in resume:
                    answers.setdefault((_id(s), t["id"]), []).append(resume[iid])
        elif under:  # the newest pause made before the run: runs on a thread take turns
            created = str(run.get("created_at"))
            asked = [st for st in under if str(st[0].get("created_at")) < created] or under
            s, t = max(asked, key=lambda st: _id(st[0]))
            answers.setdefault((_id(s), t["id"]), []).append(resume)
    for (checkpoint, task_id), values in answers.items():
        writes[checkpoint].append((task_id, RESUME, values))


def _restate_joins(graph: Any, root: list[dict[str, Any]]) -> None:
    """The root tasks of join nodes (``add_edge([a, b], c)``), which the history omits.

    The server reads checkpoints back through a JSON hook that turns the join barrier's
    set of finished sources into a list, which LangGraph no longer sees as complete, so
    ``get_history`` lists no task for a join node at the checkpoint it runs from. The
    barrier is restated from the tasks each checkpoint's lineage finished: the join
    node is planned where all its sources finished since it last ran, and finished
    there when a later checkpoint shows the superstep done."""
    channels = getattr(graph, "channels", None)
    nodes = getattr(graph, "nodes", None)
    if not isinstance(channels, Mapping) or not isinstance(nodes, Mapping):
        return
    joins = {
        target: frozenset(getattr(channel, "names", ()))
        for name, channel in channels.items()
        if name.startswith("join:") and (target := name.rsplit(":", 1)[-1]) in nodes
    }
    if not joins:
        return
    by_id = {_id(s): s for s in root}
    children = {
        (s.get("parent_checkpoint") or {}).get("checkpoint_id")
        for s in root
        if (s.get("metadata") or {}).get("source") == "loop"
    }
    seen: dict[str, dict[str, frozenset[str]]] = {}

    def barrier(state: dict[str, Any]) -> dict[str, frozenset[str]]:
        """Each join's finished sources when ``state`` was written."""
        chain = [state]
        while (parent := _parent(chain[-1], by_id)) is not None and _id(parent) not in seen:
            chain.append(parent)
        for current in reversed(chain):
            parent = _parent(current, by_id)
            found = dict(seen[_id(parent)]) if parent is not None else {}
            for task in (parent or {}).get("tasks") or ():
                if task.get("result") is None:
                    continue
                for target, sources in joins.items():
                    if task["name"] == target:
                        found[target] = frozenset()
                    elif task["name"] in sources:
                        found[target] = found.get(target, frozenset()) | {task["name"]}
            seen[_id(current)] = found
        return seen[_id(state)]

    for state in sorted(root, key=_id):
        listed = {t["name"] for t in state.get("tasks") or ()}
        ready = [
            target
            for target, sources in barrier(state).items()
            if sources == joins[target] and target not in listed
        ]
        if not ready:
            continue
        done = _id(state) in children
        for target, task_id in goto_tasks(graph, _planning(state), tuple(ready))[0]:
            state.setdefault("tasks", []).append(
                {"id": task_id, "name": target, "path": [PULL, target], "interrupts": []}
                | {"error": None, "checkpoint": None, "result": {} if done else None}
            )


def _planning(state: Mapping[str, Any]) -> StoredFields:
    """What :func:`goto_tasks` reads of a root checkpoint (its id and step)."""
    return StoredFields(
        id=_id(state),
        ns=ROOT_NS,
        parent_id=None,
        metadata=dict(state.get("metadata") or {}),
        created_at=None,
        interrupt_seen=None,
        pending_writes=(),
        channel_values={},
    )


def _parent(state: Mapping[str, Any], by_id: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    parent_id = (state.get("parent_checkpoint") or {}).get("checkpoint_id")
    return by_id.get(parent_id) if parent_id else None


def _restate_gotos(
    graph: Any,
    root: list[dict[str, Any]],
    thread_runs: list[dict[str, Any]],
    writes: dict[str, list[tuple[str, str, Any]]],
) -> None:
    """The tasks a resume's ``Command(goto=...)`` started beside the resumed node.

    LangGraph plans them after applying the Command, so no history entry lists them, but
    their ids follow from the checkpoint (:func:`goto_tasks`). A task whose superstep the
    run got past (a later checkpoint of the run) finished: its writes are in that
    checkpoint's values, so it is restated as finished without them."""
    by_id = {_id(s): s for s in root}
    for run in thread_runs:
        command = (run.get("kwargs") or {}).get("command") or {}
        names = tuple(g for g in as_list(command.get("goto")) if isinstance(g, str))
        start = _started_at(run, root) if names and command.get("resume") is not None else None
        state = by_id.get(start) if start else None
        if state is None or not any(
            (s.get("parent_checkpoint") or {}).get("checkpoint_id") == start
            and (s.get("metadata") or {}).get("run_id") == run["run_id"]
            for s in root
        ):
            continue
        planned = {t["id"] for t in state.get("tasks") or ()}
        targets, _ = goto_tasks(graph, _planning(state), names)
        found = writes.setdefault(_id(state), [])
        for _, task_id in targets:
            if task_id not in planned and all(w[0] != task_id for w in found):
                found.append((task_id, RETURN, None))


def _edited_pause(
    start: str, flat: list[dict[str, Any]], leaves: list[tuple[Mapping[str, Any], Any]]
) -> list[tuple[Mapping[str, Any], Any]]:
    """The paused tasks a resume from an ``update_state`` checkpoint answers.

    ``update_state`` while a node waits at ``interrupt()`` writes a checkpoint whose tasks
    list no interrupts; LangGraph re-plans the paused node there, under a new task id, and
    the resume answers the interrupt it raised at the checkpoint before the edits. So each
    root task that paused there stands for the task of the same name at ``start``, and a
    node that paused in a subgraph for the first task of its name that finished in that
    subgraph (by node names) in the run from ``start``, which entered it afresh."""
    states = {_id(s): s for s in flat if _ns(s) == ROOT_NS}
    state = states.get(start)
    edited = state
    while edited is not None and (edited.get("metadata") or {}).get("source") == "update":
        parent_id = (edited.get("parent_checkpoint") or {}).get("checkpoint_id")
        edited = states.get(parent_id) if parent_id else None
    if state is None or edited is None or edited is state:
        return []
    replanned = {t["name"]: t for t in state.get("tasks") or ()}
    found: list[tuple[Mapping[str, Any], Any]] = [
        (state, {**replanned[t["name"]], "interrupts": t["interrupts"]})
        for s, t in leaves
        if _id(s) == _id(edited) and t["name"] in replanned
    ]
    inside = [(s, t) for s, t in leaves if _ns(s) != ROOT_NS and _root_anchor(s) == _id(edited)]
    for s, t in inside:
        rerun = [
            (later, task)
            for later in flat
            if _root_anchor(later) == start and recast(_ns(later)) == recast(_ns(s))
            for task in later.get("tasks") or ()
            if task["name"] == t["name"] and task.get("result") is not None
        ]
        if rerun:
            later, task = min(rerun, key=lambda pair: _id(pair[0]))
            found.append((later, {**task, "interrupts": t["interrupts"]}))
    return found


def _is_map(resume: Any, under: list[tuple[Mapping[str, Any], Any]]) -> bool:
    ids = {i.get("id") for _, t in under for i in t["interrupts"]}
    return isinstance(resume, dict) and bool(resume) and all(k in ids for k in resume)


def _restate_updates(
    states: Mapping[str, list[dict[str, Any]]],
    by_id: Mapping[str, dict[str, Any]],
    writes: dict[str, list[tuple[str, str, Any]]],
) -> None:
    for ns_states in states.values():
        for state in ns_states:
            if (state.get("metadata") or {}).get("source") != "update":
                continue
            parent_id = (state.get("parent_checkpoint") or {}).get("checkpoint_id")
            parent = by_id.get(parent_id) if parent_id else None
            if parent is None or any(
                t.get("result") is not None for t in parent.get("tasks") or ()
            ):
                continue
            old, new = parent.get("values") or {}, state.get("values") or {}
            if not isinstance(old, dict) or not isinstance(new, dict):
                continue
            for key, value in new.items():
                if key in old and old[key] == value:
                    continue
                before = old.get(key)
                if (
                    isinstance(value, list)
                    and isinstance(before, list)
                    and value[: len(before)] == before
                ):
                    value = value[len(before) :]
                writes[_id(parent)].append((UPDATE_TASK, key, value))


def _resumed_at(flat: list[dict[str, Any]], thread_runs: list[dict[str, Any]]) -> dict[str, str]:
    """``versions_seen['__interrupt__']`` stand-ins: per checkpoint, the id of the newest
    checkpoint of its lineage a run resumed at (changes exactly where LangGraph's does)."""
    resuming = {
        r["run_id"]
        for r in thread_runs
        if (r.get("kwargs") or {}).get("command") or (r.get("kwargs") or {}).get("input") is None
    }
    by_id = {_id(s): s for s in flat}
    seen: dict[str, str] = {}

    def mark(checkpoint_id: str) -> str:
        if checkpoint_id in seen:
            return seen[checkpoint_id]
        state = by_id[checkpoint_id]
        parent_id = (state.get("parent_checkpoint") or {}).get("checkpoint_id")
        if parent_id is None or parent_id not in by_id:
            seen[checkpoint_id] = ""
            return ""
        parent = by_id[parent_id]
        run_id = (state.get("metadata") or {}).get("run_id")
        new_run = run_id != (parent.get("metadata") or {}).get("run_id")
        source = (state.get("metadata") or {}).get("source")
        here = parent_id if new_run and run_id in resuming and source == "loop" else mark(parent_id)
        seen[checkpoint_id] = here
        return here

    for checkpoint_id in sorted(by_id):
        mark(checkpoint_id)
    return seen


_MESSAGES: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "ai": AIMessage,
    "tool": ToolMessage,
    "system": SystemMessage,
}


def revive(value: Any) -> Any:
    """State values as the graph held them, as far as JSON tells: message dicts back to
    LangChain messages, recursively."""
    if isinstance(value, dict):
        kind = _MESSAGES.get(str(value.get("type")))
        if kind is not None and "content" in value:
            try:
                return kind.model_validate(value)
            except Exception:
                return value
        return {k: revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [revive(v) for v in value]
    return value


def _record(
    graph: Any,
    state: Mapping[str, Any],
    task_writes: list[tuple[str, str, Any]],
    resumed: Mapping[str, str],
    by_name: set[str],
    warnings: list[str],
) -> CheckpointRecord:
    metadata = dict(state.get("metadata") or {})
    checkpoint_id = _id(state)
    mark = resumed.get(checkpoint_id, "")
    tasks = state.get("tasks") or ()
    start = next((t for t in tasks if t["name"] == "__start__"), None)
    values = state.get("values")
    stored = StoredFields(
        id=checkpoint_id,
        ns=_ns(state),
        parent_id=(state.get("parent_checkpoint") or {}).get("checkpoint_id"),
        metadata=metadata,
        created_at=state.get("created_at"),
        interrupt_seen={"resumed_at": mark} if mark else None,
        pending_writes=task_writes,
        channel_values={} if start is None else {"__start__": start.get("result")},
        by_name=checkpoint_id in by_name,
    )
    planned = [
        _Planned(t["id"], t["name"], revive(t.get("result")), tuple(t.get("path") or ()))
        for t in tasks
    ]
    record = build_record(graph, stored, planned, lambda: revive(values), warnings)
    if graph is None:  # without the graph, any stop may have been a static breakpoint
        record.breakpoints = Breakpoints(known=False)
    return record
