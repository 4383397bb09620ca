"""Which checkpoints a trajectory follows: thread look-up, fork lineage and the tip.

Shared by every reader so that "thread not found" and "checkpoint not in this
thread" read the same whatever the storage.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from lg_eval.errors import CheckpointNotFoundError, ThreadNotFoundError
from lg_eval.extract._records import ROOT_NS

T = TypeVar("T")


def _namespace(item: Any) -> str:
    """The namespace of a ``CheckpointTuple`` (from its config) or of a record or row."""
    config = getattr(item, "config", None)
    ns: str = item.ns if config is None else config["configurable"].get("checkpoint_ns", ROOT_NS)
    return ns


def _checkpoint_id(item: Any) -> str:
    """The checkpoint id of a ``CheckpointTuple`` (from its config) or of a record or row."""
    config = getattr(item, "config", None)
    checkpoint_id: str = item.id if config is None else config["configurable"]["checkpoint_id"]
    return checkpoint_id


def group_by_namespace(items: Iterable[T], thread_id: str) -> dict[str, list[T]]:
    """Group checkpoint tuples (or records) by namespace; a thread with none is an error."""
    grouped: dict[str, list[T]] = defaultdict(list)
    for item in items:
        grouped[_namespace(item)].append(item)
    if not grouped.get(ROOT_NS):
        raise ThreadNotFoundError(
            f"Thread {thread_id!r} has no checkpoints in this checkpointer. Check the thread_id, "
            "and that the graph was run with this checkpointer (and this thread_id) before "
            "extracting."
        )
    return dict(grouped)


def choose_tip(
    by_ns: Mapping[str, Sequence[Any]], thread_id: str, checkpoint_id: str | None
) -> str:
    """The checkpoint whose lineage is followed: the one named, else the newest."""
    root_ids = [_checkpoint_id(item) for item in by_ns[ROOT_NS]]
    if checkpoint_id is None:
        return max(root_ids)
    if checkpoint_id not in root_ids:
        raise CheckpointNotFoundError(
            f"Checkpoint {checkpoint_id!r} is not part of thread {thread_id!r}. Drop "
            "'checkpoint_id' from the config to follow the newest checkpoint, or take an id "
            "from graph.get_state_history(config)."
        )
    return checkpoint_id
