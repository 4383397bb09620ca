"""A checkpoint read whole from storage but left serialized, channel by channel.

Where a run stopped (the end of a turn, a pause, a breakpoint, an error, a
fork), the fast reader needs two things the write rows cannot give: the tasks
LangGraph had planned there, and the state values a turn ends with. Both come
from the checkpoint itself, but decoding it whole is what makes
``get_state`` slow on long threads: the ``messages`` list, and the ``Send``
packets of ``create_react_agent`` that each carry a copy of the whole state.

A :class:`StoredCheckpoint` keeps every channel value in its serialized form.
The planner (:mod:`~lg_eval.extract.fast._planning`) decodes only the small
trigger channels and the *node names* of pending ``Send`` packets
(:func:`pending_sends`, which skips over each packet's argument without
building it); the state is decoded later, and only if someone reads
``Turn.state`` or a completed turn's result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgpack
from langgraph.types import Send

Serialized = tuple[str, bytes | memoryview]
"""``(serializer type, bytes)``, as ``serde.loads_typed`` takes it."""

_SEND_EXT = 1
"""``EXT_CONSTRUCTOR_POS_ARGS``: how ``JsonPlusSerializer`` stores a ``Send``."""
_SEND_CLASS = ("langgraph.types", "Send")


class Unreadable(ValueError):
    """Stored bytes are not shaped as this module expects (the caller asks LangGraph)."""


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """One checkpoint as stored: its fields decoded, its channel values not."""

    checkpoint: dict[str, Any]
    """``v``, ``id``, ``ts``, ``channel_versions``, ``versions_seen``... without values."""
    raw: dict[str, Serialized]
    """Channel name -> serialized value (channels without a value are absent)."""
    inline: dict[str, Any] = field(default_factory=dict)
    """Channel values the storage keeps decoded (Postgres stores primitives as JSON)."""

    def has(self, channel: str) -> bool:
        return channel in self.raw or channel in self.inline

    def decode(self, serde: Any, channels: Iterable[str]) -> dict[str, Any]:
        """The values of ``channels`` (those that have one), decoded."""
        values: dict[str, Any] = {}
        for channel in channels:
            if channel in self.inline:
                values[channel] = self.inline[channel]
            elif channel in self.raw:
                values[channel] = serde.loads_typed(self.raw[channel])
        return values


def split_msgpack_checkpoint(data: bytes) -> StoredCheckpoint:
    """A checkpoint serialized whole as one msgpack map (``SqliteSaver``), split into its
    fields and one byte slice per channel value (nothing in the values is decoded)."""
    unpacker = _unpacker(data)
    view = memoryview(data)
    checkpoint: dict[str, Any] = {}
    raw: dict[str, Serialized] = {}
    try:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            if key != "channel_values":
                checkpoint[key] = unpacker.unpack()
                continue
            for _ in range(unpacker.read_map_header()):
                channel = unpacker.unpack()
                start = unpacker.tell()
                unpacker.skip()
                raw[channel] = ("msgpack", view[start : unpacker.tell()])
    except (ValueError, msgpack.UnpackException) as exc:
        raise Unreadable(f"checkpoint is not a msgpack map: {exc}") from exc
    if unpacker.tell() != len(data):
        raise Unreadable("checkpoint has trailing bytes")
    return StoredCheckpoint(checkpoint=checkpoint, raw=raw)


def pending_sends(value: Serialized) -> list[Send]:
    """The ``Send`` packets of a stored ``__pregel_tasks`` value, with their node names
    and without their arguments (``arg`` is ``None``): planning needs only the names."""
    kind, data = value
    if kind != "msgpack":
        raise Unreadable(f"pending sends serialized as {kind!r}")
    unpacker = _unpacker(data)
    try:
        sends = [unpacker.unpack() for _ in range(unpacker.read_array_header())]
    except (ValueError, msgpack.UnpackException) as exc:
        raise Unreadable(f"pending sends are not a msgpack list: {exc}") from exc
    return sends


def last_item(value: Serialized) -> Serialized | None:
    """The last item, still serialized, of a stored msgpack array (``None`` if empty),
    skipping over the other items without building them."""
    kind, data = value
    if kind != "msgpack":
        raise Unreadable(f"value serialized as {kind!r}")
    unpacker = _unpacker(data)
    try:
        length = unpacker.read_array_header()
        for _ in range(length - 1):
            unpacker.skip()
        start = unpacker.tell()
        if length:
            unpacker.skip()
    except (ValueError, msgpack.UnpackException) as exc:
        raise Unreadable(f"value is not a msgpack array: {exc}") from exc
    return ("msgpack", memoryview(data)[start : unpacker.tell()]) if length else None


def _send_node(code: int, data: bytes) -> Send:
    """``ext_hook`` for a packet: read the class and node name, skip the argument."""
    if code != _SEND_EXT:
        raise Unreadable(f"a pending packet is extension type {code}, not a Send")
    unpacker = _unpacker(data)
    if unpacker.read_array_header() != 3:
        raise Unreadable("a pending packet is not (module, class, args)")
    found = (unpacker.unpack(), unpacker.unpack())
    if found != _SEND_CLASS:
        raise Unreadable(f"a pending packet is a {found}, not a Send")
    if unpacker.read_array_header() not in (2, 3):
        raise Unreadable("a pending Send does not hold (node, arg[, timeout])")
    node = unpacker.unpack()
    if not isinstance(node, str):
        raise Unreadable("a pending Send's node is not a name")
    return Send(node, None)


def _unpacker(data: bytes | memoryview) -> msgpack.Unpacker:
    unpacker = msgpack.Unpacker(
        raw=False,
        strict_map_key=False,
        max_buffer_size=max(len(data), 1),
        ext_hook=_send_node,
    )
    unpacker.feed(data)
    return unpacker
