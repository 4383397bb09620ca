"""Reading stored checkpoints without decoding them (``lg_eval.extract.fast._stored``).

The fast reader plans the checkpoints where a run stopped from their serialized form:
it slices a SQLite checkpoint into per-channel values, reads only the node names of
pending ``Send`` packets, and decodes only the last message for a turn's result. These
tests pin each piece on bytes made by LangGraph's own serializer, including the shapes
it must refuse (so the reader asks ``get_state`` instead of guessing).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Send

from lg_eval.extract.fast import _naming as naming
from lg_eval.extract.fast._rows import json_fields
from lg_eval.extract.fast._stored import (
    StoredCheckpoint,
    Unreadable,
    last_item,
    pending_sends,
    split_msgpack_checkpoint,
)

SERDE = JsonPlusSerializer()
STATE = {"messages": [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]}
CHECKPOINT: dict[str, Any] = {
    "v": 4,
    "ts": "2026-11-29T00:00:00+00:00",
    "id": "1f0c0000-0000-6000-8000-000000000000",
    "channel_values": {
        "messages": STATE["messages"],
        "branch:to:agent": None,
        "__pregel_tasks": [Send("tools", STATE), Send("tools", {"n": 2})],
    },
    "channel_versions": {"messages": "00002.1", "branch:to:agent": "00002.2"},
    "versions_seen": {"agent": {"branch:to:agent": "00001.5"}},
    "updated_channels": ["messages"],
}


def serialized(value: Any) -> tuple[str, bytes]:
    return SERDE.dumps_typed(value)


def test_a_sqlite_checkpoint_splits_into_fields_and_undecoded_channel_values() -> None:
    kind, data = serialized(CHECKPOINT)
    assert kind == "msgpack"
    stored = split_msgpack_checkpoint(data)
    assert stored.checkpoint == {k: v for k, v in CHECKPOINT.items() if k != "channel_values"}
    assert sorted(stored.raw) == ["__pregel_tasks", "branch:to:agent", "messages"]
    assert stored.decode(SERDE, ["messages", "branch:to:agent", "absent"]) == {
        "messages": STATE["messages"],
        "branch:to:agent": None,
    }
    assert stored.has("branch:to:agent") and not stored.has("absent")


def test_pending_sends_give_node_names_without_building_arguments() -> None:
    stored = split_msgpack_checkpoint(serialized(CHECKPOINT)[1])
    sends = pending_sends(stored.raw["__pregel_tasks"])
    assert [(s.node, s.arg) for s in sends] == [("tools", None), ("tools", None)]
    assert pending_sends(serialized([])) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([HumanMessage("not a send")], "not a Send"),
        ({"a": 1}, "not a msgpack list"),
    ],
)
def test_pending_packets_that_are_not_sends_are_refused(value: Any, message: str) -> None:
    with pytest.raises(Unreadable, match=message):
        pending_sends(serialized(value))


def test_plain_pending_values_pass_through_as_langgraph_sees_them() -> None:
    # LangGraph itself ignores a packet that is not a Send (with a warning); the planner
    # hands such values on unchanged so that prepare_next_tasks decides the same way.
    assert pending_sends(serialized([1, "x"])) == [1, "x"]


def test_pending_sends_refuse_another_serializer() -> None:
    with pytest.raises(Unreadable, match="pending sends serialized as 'pickle'"):
        pending_sends(("pickle", b"\x80"))


def test_last_item_decodes_only_the_last_message() -> None:
    last = last_item(serialized(STATE["messages"]))
    assert last is not None
    assert SERDE.loads_typed(last) == STATE["messages"][-1]
    assert last_item(serialized([])) is None
    with pytest.raises(Unreadable, match="not a msgpack array"):
        last_item(serialized("a string"))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (serialized([1, 2])[1], "not a msgpack map"),
        (serialized({"v": 4})[1] + b"\x00", "trailing bytes"),
        (serialized(CHECKPOINT)[1][:-3], "not a msgpack map"),
    ],
)
def test_malformed_checkpoints_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(Unreadable, match=message):
        split_msgpack_checkpoint(data)


def test_inline_values_are_read_as_stored() -> None:
    stored = StoredCheckpoint(checkpoint={}, raw={}, inline={"count": 3})
    assert stored.decode(SERDE, ["count"]) == {"count": 3}
    assert stored.has("count")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (None, None),
        ('{"a": [1, 2.5, "x", null, true]}', {"a": [1, 2.5, "x", None, True]}),
        (b'{"step": 3}', {"step": 3}),
        ("1e400", float("inf")),  # orjson refuses it, json reads it
    ],
)
def test_stored_json_fields_read_as_the_json_module_reads_them(text: Any, value: Any) -> None:
    assert json_fields(text) == value


def test_naming_forgets_subgraph_namespaces_past_its_bound(monkeypatch: Any) -> None:
    from graphs.scenarios import SCENARIOS

    monkeypatch.setattr(naming, "_NAMESPACES_KEPT", 2)
    graph = SCENARIOS["weather"].build()  # the naming holds its graph weakly: keep it alive
    found = naming.Naming(graph)
    for ns in ("", "a:1", "a:2", "a:3"):
        found.nodes(ns)
    assert len(found._by_ns) == 2
    assert found.nodes("").graph is found.nodes("a:9").graph  # unknown subgraph: the root
