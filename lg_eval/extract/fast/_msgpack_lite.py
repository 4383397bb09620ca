"""Read the small parts of a msgpack-serialized checkpoint without decoding the rest.

``SqliteSaver`` stores a checkpoint as one msgpack map, channel values inline:
``{"v", "ts", "id", "channel_values", "channel_versions", "versions_seen",
"updated_channels"}``. The first three entries fit in a short prefix and the
last two in a short suffix, so the SQLite reader selects only those two slices
of each row (``substr``) and parses them here, giving ``ormsgpack`` a map
header for just the entries wanted; the channel values in between, which grow
with the thread, are never read. Extension types (what the serializer uses for
objects) are refused: these entries hold only strings, numbers and dicts.
Anything unexpected raises :class:`Unsupported` and the caller falls back.
"""

from __future__ import annotations

from typing import Any

import ormsgpack


class Unsupported(ValueError):
    """The bytes are not the plain msgpack shape this module reads."""


def _no_ext(code: int, data: bytes) -> Any:
    raise Unsupported("extension type")


def _entries(data: bytes, count: int) -> dict[Any, Any]:
    """The first ``count`` key/value pairs encoded at the start of ``data``."""
    try:
        value = ormsgpack.unpackb(bytes([0x80 | count]) + data, ext_hook=_no_ext)
    except (ValueError, TypeError) as exc:  # ormsgpack reports truncation as ValueError
        raise Unsupported(str(exc)) from exc
    if not isinstance(value, dict) or len(value) != count:
        raise Unsupported("not a map")
    return value


def loads(data: bytes) -> Any:
    """A small msgpack document made of plain types (a stored checkpoint or metadata)."""
    try:
        return ormsgpack.unpackb(data, ext_hook=_no_ext)
    except (ValueError, TypeError) as exc:
        raise Unsupported(str(exc)) from exc


def checkpoint_head(prefix: bytes) -> dict[str, Any]:
    """``v``, ``ts`` and ``id`` from the first bytes of a serialized checkpoint."""
    if not prefix or not 0x80 <= prefix[0] <= 0x8F:
        raise Unsupported("checkpoint is not a small msgpack map")
    head = _entries(prefix[1:], 3)
    if list(head) != ["v", "ts", "id"]:
        raise Unsupported(f"unexpected checkpoint keys {list(head)}")
    return head


_TAIL_KEY = b"\xadversions_seen"
_TAIL_KEYS = (["versions_seen", "updated_channels"], ["versions_seen"])


def checkpoint_tail(tail: bytes) -> dict[str, Any]:
    """``versions_seen`` and ``updated_channels`` from the last bytes of a checkpoint.

    Channel values come before these entries, so the last occurrence of the key
    that parses as them is the real one (a node named ``versions_seen`` only
    shows up later, inside the map, and does not parse as the entries).
    """
    end = len(tail)
    while (start := tail.rfind(_TAIL_KEY, 0, end)) >= 0:
        end = start
        for keys in _TAIL_KEYS:
            try:
                found = _entries(tail[start:], len(keys))
            except Unsupported:
                continue
            if list(found) == keys and isinstance(found["versions_seen"], dict):
                return found
    raise Unsupported("versions_seen not found in the checkpoint's last bytes")
