"""Values as plain data graph state can hold: dicts with string keys, lists, strings,
finite numbers, bools and None (what LangGraph's serializer writes on every saver), and
exceptions and values as bounded text. What cannot be kept is dropped and named."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import numbers
import uuid
from collections.abc import Mapping
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

from lg_eval._feedback import describe_error, is_finite_number, safe_text

MAX_DEPTH = 32


MAX_DROPPED = 20


_INT_RANGE = (-(2**63), 2**64 - 1)  # what msgpack (LangGraph's serializer) can write


def plain_metadata(metadata: Any, dropped: list[str]) -> dict[str, Any] | None:
    if metadata is None:
        return None
    value = plain(metadata, "metadata", dropped)
    if isinstance(value, dict):
        return value
    if value is not DROP:
        _note(dropped, "metadata", f"a {type(metadata).__name__}, not a dict")
    return None


class _Dropped:
    def __repr__(self) -> str:
        return "<dropped>"


DROP: Any = _Dropped()


def plain(value: Any, path: str, dropped: list[str]) -> Any:
    """``value`` as plain data (dicts with string keys, lists, str, finite numbers, bools,
    None); what cannot be kept is left out and noted in ``dropped`` as ``'path: why'``.

    Pydantic models and dataclasses become dicts, enums their value, dates ISO
    text, UUIDs and paths text. Returns ``DROP`` when ``value`` itself is dropped.
    """
    return _plain(value, path, dropped, set(), 0)


def _note(dropped: list[str], path: str, why: str) -> None:
    if len(dropped) < MAX_DROPPED:
        dropped.append(f"{path}: {why}")
    elif len(dropped) == MAX_DROPPED:
        dropped.append("… (more dropped values not listed)")


def _plain(value: Any, path: str, dropped: list[str], active: set[int], depth: int) -> Any:
    try:
        return _convert(value, path, dropped, active, depth)
    except Exception as exc:  # a container whose iteration or conversion raises
        _note(dropped, path, f"could not be read ({describe_error(exc)[:200]})")
        return DROP


def _convert(value: Any, path: str, dropped: list[str], active: set[int], depth: int) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, enum.Enum):
        return _plain(value.value, path, dropped, active, depth)
    if isinstance(value, int):
        if _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            return int(value)
        _note(dropped, path, "an integer too large to store")
        return DROP
    if isinstance(value, float):
        if is_finite_number(value):
            return float(value)
        _note(dropped, path, f"the non-finite number {value!r}")
        return DROP
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | PurePath):
        return str(value)
    if isinstance(value, Decimal | numbers.Real):
        return _plain(float(value), path, dropped, active, depth)
    if depth >= MAX_DEPTH:
        _note(dropped, path, f"nested more than {MAX_DEPTH} levels deep")
        return DROP
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(mode="json"), path, dropped, active, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _plain(fields, path, dropped, active, depth + 1)
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        if id(value) in active:
            _note(dropped, path, "a reference to a containing value (a cycle)")
            return DROP
        active.add(id(value))
        try:
            return _container(value, path, dropped, active, depth)
        finally:
            active.discard(id(value))
    _note(dropped, path, f"a {type(value).__name__}, which is not plain data")
    return DROP


def _container(value: Any, path: str, dropped: list[str], active: set[int], depth: int) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for raw_key, item in list(value.items()):
            name = _key(raw_key)
            where = f"{path}.{name if name is not None else safe_text(raw_key, 50)}"
            if name is None:
                _note(dropped, where, f"a key of type {type(raw_key).__name__}")
                continue
            converted = _plain(item, where, dropped, active, depth + 1)
            if converted is not DROP:
                out[name] = converted
        return out
    items = []
    for index, item in enumerate(list(value)):
        converted = _plain(item, f"{path}[{index}]", dropped, active, depth + 1)
        if converted is not DROP:
            items.append(converted)
    return items


def _key(key: Any) -> str | None:
    if isinstance(key, str):
        return str(key)
    if (
        key is None
        or isinstance(key, bool | int)
        or (isinstance(key, float) and is_finite_number(key))
    ):
        return str(key)
    if isinstance(key, enum.Enum):
        return _key(key.value)
    return None
