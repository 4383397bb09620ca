"""What ``get_state`` says of a checkpoint, computed without decoding its state.

``get_state`` builds every channel of a checkpoint from its stored value, then
asks ``prepare_next_tasks`` which tasks run next. Which tasks run depends only
on the channels that trigger nodes (``branch:to:*``, ``__start__``... small
values) and on the node names of the pending ``Send`` packets, so
:func:`planned_tasks` hands LangGraph's own ``prepare_next_tasks`` exactly
those, built from a :class:`~lg_eval.extract.fast._stored.StoredCheckpoint`,
and gets the same tasks, ids and order at a fraction of the cost.
:func:`state_loader` decodes the graph's output channels the way the snapshot
reads them, lazily, when a turn's state or result is wanted.

Both use LangGraph internals (``prepare_next_tasks``, ``channels_from_checkpoint``,
``read_channels``), covered by the version pin in
:mod:`~lg_eval.extract.fast._versions`. When a checkpoint needs more than this
(delta channels rebuilt from ancestors, a packet that is not a ``Send``), they
raise and the reader asks ``get_state`` for that checkpoint instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, cast
from weakref import WeakKeyDictionary

from langchain_core.runnables import RunnableConfig
from langgraph._internal._typing import MISSING
from langgraph.channels.base import BaseChannel
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.last_value import LastValue
from langgraph.checkpoint.base import Checkpoint
from langgraph.pregel._algo import prepare_next_tasks  # internal: version-pinned
from langgraph.pregel._checkpoint import (  # internal: version-pinned
    _delta_channels_to_replay,
    channels_from_checkpoint,
)
from langgraph.pregel._io import read_channels  # internal: version-pinned
from langgraph.types import PregelTask

from lg_eval.extract._results import turn_result
from lg_eval.extract.fast._rows import kept_per_graph
from lg_eval.extract.fast._stored import StoredCheckpoint, Unreadable, last_item, pending_sends

TASKS = "__pregel_tasks"
MESSAGES = "messages"


def planned_tasks(
    graph: Any,
    config: RunnableConfig,
    step: int,
    stored: StoredCheckpoint,
    pending_writes: list[tuple[str, str, Any]],
    serde: Any,
) -> list[PregelTask]:
    """The tasks ``graph`` planned at the stored checkpoint of metadata step ``step``,
    as ``get_state`` lists them (same ids, names and order). Where nothing can run (no
    pending ``Send`` and :func:`_may_pull` says no node is triggered) that is ``[]``, and
    no channel is decoded."""
    specs = _planning_specs(graph)
    sends = None
    if stored.has(TASKS):
        raw = stored.raw.get(TASKS)
        if raw is None:
            raise Unreadable("pending sends are not stored serialized")
        sends = pending_sends(raw)
    if not sends and not _may_pull(graph, stored, specs):
        return []  # the usual end of a turn: prepare_next_tasks would plan nothing
    values = stored.decode(serde, specs.needed)
    if sends is not None:
        values[TASKS] = sends
    checkpoint = _checkpoint(stored, values, specs.replayable)
    found, managed = channels_from_checkpoint(specs.built, checkpoint)
    channels = {  # the rest left empty: they only fill task inputs, which are not used
        name: found[name] if name in found else spec.from_checkpoint(MISSING)
        for name, spec in specs.channels
    }
    tasks = prepare_next_tasks(
        checkpoint,
        pending_writes,
        graph.nodes,
        channels,
        managed,
        config,
        step + 1,
        step + 3,
        for_execution=False,
    )
    return list(tasks.values())


class _Specs(NamedTuple):
    """What planning needs of a graph's channels."""

    needed: frozenset[str]
    """Every node's triggers, and the channel a node reads when it reads just one (the
    task exists only if that one has a value)."""
    built: dict[str, Any]
    """The specs of ``needed``, the pending sends and the managed values."""
    available_empty: frozenset[str]
    """Triggers that count as having a value even when nothing is stored (a
    ``BinaryOperatorAggregate`` starts from its type's empty value)."""
    channels: tuple[tuple[str, BaseChannel[Any, Any, Any]], ...]
    """Every channel of the graph (not the managed values), in the graph's order."""
    replayable: dict[str, Any]
    """The specs of ``built`` that LangGraph could rebuild from history (see
    :func:`_replayable`)."""


def _may_pull(graph: Any, stored: StoredCheckpoint, specs: _Specs) -> bool:
    """Whether ``prepare_next_tasks`` could start any node at the stored checkpoint (a
    pull task), told from versions alone: it starts a node only if one of its triggers
    has a value and, if the node ran before, a newer version than the node saw. False
    means the trigger channels need not be built to ask it. Channels a run cleared (a
    consumed ``branch:to:*``) keep their new version but have no value."""
    versions = stored.checkpoint.get("channel_versions") or {}
    if not versions:
        return False  # no versions: prepare_next_tasks plans no pull task at all
    null = type(next(iter(versions.values())))()
    seen_by_node = stored.checkpoint.get("versions_seen") or {}
    for name, node in graph.nodes.items():
        seen = seen_by_node.get(name)
        for channel in node.triggers:
            if not (stored.has(channel) or channel in specs.available_empty):
                continue
            if seen is None or versions.get(channel, null) > seen.get(channel, null):
                return True
    return False


_specs: WeakKeyDictionary[Any, _Specs] = WeakKeyDictionary()


def _planning_specs(graph: Any) -> _Specs:
    """The channel specs planning needs (see :class:`_Specs`), kept per graph."""
    return kept_per_graph(_specs, graph, _build_planning_specs)


def _build_planning_specs(graph: Any) -> _Specs:
    needed = {channel for node in graph.nodes.values() for channel in node.triggers}
    needed.update(n.channels for n in graph.nodes.values() if isinstance(n.channels, str))
    needed.discard(TASKS)
    built = {
        name: spec
        for name, spec in graph.channels.items()
        if name in needed or name == TASKS or not isinstance(spec, BaseChannel)
    }
    available_empty = {
        name
        for name, spec in built.items()
        if name in needed
        and (not isinstance(spec, BaseChannel) or spec.from_checkpoint(MISSING).is_available())
    }
    channels = tuple(
        (name, spec) for name, spec in graph.channels.items() if isinstance(spec, BaseChannel)
    )
    return _Specs(
        frozenset(needed), built, frozenset(available_empty), channels, _replayable(built)
    )


def _replayable(specs: dict[str, Any]) -> dict[str, Any]:
    """The specs among ``specs`` for which LangGraph's ``_delta_channels_to_replay`` can
    name the channel at all (it asks each spec's type first, then the checkpoint): the
    same answer for every checkpoint of a graph, computed once here by asking it about a
    checkpoint where every channel has a version and no value."""
    probe = cast(Checkpoint, {"channel_versions": dict.fromkeys(specs, 1), "channel_values": {}})
    return {name: specs[name] for name in _delta_channels_to_replay(specs, probe)}


def state_loader(graph: Any, stored: StoredCheckpoint, serde: Any) -> Callable[[], Any]:
    """A function giving the state values at the stored checkpoint, as
    ``get_state(...).values`` does when no ``update_state``-style writes are pending
    there. Checked now, decoded when called: the bytes are already in memory, so it
    does no I/O and works after an async extraction too."""
    keys, specs, replayable = kept_per_graph(_outputs, graph, _output_specs)
    _checkpoint(stored, {name: None for name in specs if stored.has(name)}, replayable)

    def load() -> Any:
        checkpoint = _checkpoint(stored, stored.decode(serde, specs), replayable)
        channels, _ = channels_from_checkpoint(specs, checkpoint)
        return read_channels(channels, keys)

    return load


_Outputs = tuple[Any, dict[str, Any], dict[str, Any]]
_outputs: WeakKeyDictionary[Any, _Outputs] = WeakKeyDictionary()


def _output_specs(graph: Any) -> _Outputs:
    """The graph's output keys (``stream_channels_asis``), their channel specs, and those
    of the specs LangGraph could rebuild from history: what :func:`state_loader` reads."""
    keys = graph.stream_channels_asis
    names = [keys] if isinstance(keys, str) else list(keys)
    specs = {name: graph.channels[name] for name in names if name in graph.channels}
    return keys, specs, _replayable(specs)


def result_loader(
    graph: Any, stored: StoredCheckpoint, serde: Any, values: Callable[[], Any]
) -> Callable[[], Any]:
    """The flat-form result of a turn that completed at the stored checkpoint. When the
    state's ``messages`` channel is a plain list the result is its last message, so only
    that one is decoded (the rest are skipped); otherwise it comes from ``values()``."""
    keys = graph.stream_channels_asis
    raw = stored.raw.get(MESSAGES)
    plain = type(graph.channels.get(MESSAGES)) in (BinaryOperatorAggregate, LastValue)
    if isinstance(keys, str) or MESSAGES not in keys or raw is None or not plain:
        return lambda: turn_result(values())

    def load() -> Any:
        try:
            last = last_item(raw)
        except Unreadable:  # not stored as a msgpack list after all
            return turn_result(values())
        return turn_result({MESSAGES: [] if last is None else [serde.loads_typed(last)]})

    return load


def _checkpoint(
    stored: StoredCheckpoint, values: dict[str, Any], replayable: dict[str, Any]
) -> Checkpoint:
    """A checkpoint dict holding only ``values``; refuses channels that LangGraph would
    rebuild from the thread's history (a delta channel with nothing stored here; only the
    ``replayable`` specs can be one)."""
    fields = {**stored.checkpoint, "channel_values": values}
    fields.setdefault("channel_versions", {})
    fields.setdefault("versions_seen", {})
    checkpoint = cast(Checkpoint, fields)  # the stored checkpoint's own keys, as saved
    if replayable and (replay := _delta_channels_to_replay(replayable, checkpoint)):
        raise Unreadable(f"channels {replay} are rebuilt from the thread's history")
    return checkpoint
