"""The viewer's one write: a person's label of a case, from the case page's form.

:func:`save_form` reads the form the case page renders (the case, the key, pass or fail,
a note), checks it against the store (the case exists, the key is one of its feedback
keys) and writes one :class:`~lg_eval.labels.Label` (source ``viewer``) through
:mod:`lg_eval.labels`. The HTTP checks that come first (loopback, the session's token,
same origin, a bounded form body) are the server's (:mod:`lg_eval.viewer._server`).

The reads beside it: the labels of a case (:func:`case_labels`) and each labelled key's
agreement with people (:func:`agreements`), shown beside the key's scores.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from lg_eval.experiments import CaseResult, ResultStore
from lg_eval.labels import (
    Calibration,
    Label,
    calibrate,
    labelled_keys,
    load_labels,
    save_labels,
)
from lg_eval.viewer import _queries as q

FIELDS = frozenset({"token", "run", "id", "rep", "key", "verdict", "note"})
"""The form's fields; a form with any other is refused."""
MAX_NOTE = 20_000
"""The longest note, in characters."""


@dataclass(frozen=True)
class Saved:
    """What writing a form did: the label, or why none was written (HTTP status, text)."""

    label: Label | None = None
    status: int = 303
    problem: str = ""


def save_form(store: ResultStore, form: Mapping[str, str], labeler: str) -> Saved:
    """Write the label the form describes; refuse a form that names no stored case or a
    key the case was not scored on, or has another verdict than pass or fail."""
    unknown = set(form) - FIELDS
    if unknown:
        return Saved(status=400, problem=f"Unknown form fields: {', '.join(sorted(unknown))}.")
    run_id, case_id, rep = form.get("run", ""), form.get("id", ""), form.get("rep", "0")
    if not rep.isdigit() or len(rep) > 8:
        return Saved(status=400, problem="rep is a repetition number.")
    result = q.one_case(store, run_id, case_id, int(rep))
    if result is None:
        return Saved(status=404, problem="No such case in the store.")
    key = form.get("key", "")
    if key not in {row.key for row in result.scores}:
        return Saved(status=400, problem="key is not one of the case's feedback keys.")
    verdict = form.get("verdict")
    if verdict not in ("pass", "fail"):
        return Saved(status=400, problem="verdict is pass or fail.")
    note = form.get("note", "").strip()
    if len(note) > MAX_NOTE:
        return Saved(status=413, problem=f"The note is longer than {MAX_NOTE} characters.")
    try:
        label = Label(
            key=key,
            run_id=run_id,
            case_id=case_id,
            repetition=int(rep),
            thread_id=result.thread_id or None,
            verdict=verdict == "pass",
            note=note or None,
            labeler=labeler,
            source="viewer",
        )
    except ValidationError:
        return Saved(status=400, problem="The form does not describe a label.")
    save_labels(store, [label])
    return Saved(label=label)


def case_labels(store: ResultStore, result: CaseResult) -> list[Label]:
    """The labels of ``result`` (its run's case) and of its thread, oldest first."""
    own = load_labels(
        store, run_id=result.run_id, case_id=result.case_id, repetition=result.repetition
    )
    if not result.thread_id:
        return own
    threads = [
        label for label in load_labels(store, thread_id=result.thread_id) if label.run_id is None
    ]
    return sorted([*own, *threads], key=lambda label: label.labeled_at)


def agreements(store: ResultStore, keys: Collection[str]) -> dict[str, Calibration]:
    """The agreement with people of each of ``keys`` that people have labelled."""
    return {key: calibrate(store, key) for key in sorted(set(keys) & labelled_keys(store))}


__all__ = ["FIELDS", "MAX_NOTE", "Saved", "agreements", "case_labels", "save_form"]
