"""Labels in the results store: ``lg_eval_labels``, one row per labelled unit and labeler.

The table is the store's own (created and migrated with it, schema version 6); this module
writes and reads it through the store's connection. A label's identity is its key, its unit
(run, case, repetition, thread, turn, item) and its labeler: writing the same identity again
replaces the label (a person changed their mind, a harvest ran twice), so the table holds
each person's latest word on each unit. Absent parts of the identity are stored as ``''``
(and ``-1`` for no turn), since a NULL is never equal to itself in a key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from lg_eval.experiments import ResultStore, StoreError
from lg_eval.labels._models import Label

COLUMNS = "key, run_id, case_id, repetition, thread_id, turn, item, labeler"
_UPSERT = (
    f"INSERT INTO lg_eval_labels ({COLUMNS}, verdict, score, labeled_at, label)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    f" ON CONFLICT ({COLUMNS}) DO UPDATE SET verdict = excluded.verdict,"
    " score = excluded.score, labeled_at = excluded.labeled_at, label = excluded.label"
)


def row(label: Label) -> tuple[Any, ...]:
    """The table row of ``label``."""
    return (
        label.key,
        label.run_id or "",
        label.case_id or "",
        label.repetition,
        label.thread_id or "",
        -1 if label.turn is None else label.turn,
        label.item or "",
        label.labeler,
        None if label.verdict is None else json.dumps(label.verdict),
        None if label.score is None else float(label.score),
        label.labeled_at.isoformat(),
        label.model_dump_json(),
    )


def save_labels(store: ResultStore, labels: Iterable[Label]) -> int:
    """Write ``labels`` in one transaction (each replacing the label of the same key, unit
    and labeler); how many were written."""
    rows = [row(label) for label in labels]
    if rows:
        store.execute_many(_UPSERT, rows)
    return len(rows)


def load_labels(
    store: ResultStore,
    *,
    key: str | None = None,
    run_id: str | None = None,
    case_id: str | None = None,
    repetition: int | None = None,
    thread_id: str | None = None,
) -> list[Label]:
    """The stored labels that match every filter given, oldest first.

    Raises:
        StoreError: a stored label does not read as a :class:`Label` (changed by hand).
    """
    wheres, params = [], []
    for column, value in (
        ("key", key),
        ("run_id", run_id),
        ("case_id", case_id),
        ("repetition", repetition),
        ("thread_id", thread_id),
    ):
        if value is not None:
            wheres.append(f"{column} = ?")
            params.append(value)
    where = f" WHERE {' AND '.join(wheres)}" if wheres else ""
    rows = store.query(
        f"SELECT label FROM lg_eval_labels{where} ORDER BY labeled_at, {COLUMNS}", params
    )
    return read_rows(store, [text for (text,) in rows])


def labelled_keys(store: ResultStore) -> set[str]:
    """The keys people have labelled (read from the table's key index alone)."""
    return {str(key) for (key,) in store.query("SELECT DISTINCT key FROM lg_eval_labels", ())}


_LABELS: TypeAdapter[list[Label]] = TypeAdapter(list[Label])


def read_rows(store: ResultStore, texts: Sequence[Any]) -> list[Label]:
    """Stored label JSON read back as labels (in one parse: the rows as one JSON array).

    Raises:
        StoreError: one does not read (its content, written by strangers, is not shown).
    """
    try:
        labels = _LABELS.validate_json("[" + ",".join(str(text) for text in texts) + "]")
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = f"row {first['loc'][0]} of the read" if first["loc"] else "a row"
        raise _unreadable(store, where, first["msg"]) from None
    if len(labels) != len(texts):  # a row holding two objects: not one lg_eval wrote
        raise _unreadable(store, "a row", "it holds more than one label")
    return labels


def _unreadable(store: ResultStore, where: str, problem: str) -> StoreError:
    return StoreError(
        f"the results store {store.url} holds a label ({where}) that lg_eval cannot read: "
        f"{problem}. It was changed or written by something else: delete it, or restore the "
        "store from a backup."
    )
