"""A key's verdicts in the store beside the people's labels of the same cases.

A label is paired with the verdict of the evaluator key on what it labels:

* a label of a run's case, with that case's verdict in that run (when the run is one of
  ``runs``, or ``runs`` is not given);
* otherwise a label with a thread, with the verdict on that thread (a sweep's case, whose
  id is the thread's) in the newest of ``runs`` (any run when not given) that scored it:
  labels harvested from production threads pair with the sweeps that scored them, and a
  re-scored thread pairs with its new verdict.

The labels that meet on one verdict (a thread's, and a person's label of the run case
scored on that thread) make the person's side of it: the newest whole-case label; without
one, the labels of its turns and actions together: a case passes when each of them does
(True only if every one is True). A case labelled with a category at a finer level than
the whole has no such sum and stays unpaired, and so does a category against the key's
pass/fail. A verdict of the key that is missing, an error or no verdict leaves the label
unpaired too; :class:`Pairing` counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import ValidationError

from lg_eval.experiments import ResultStore, ScoreRow, StoreError
from lg_eval.labels._models import Label, Split
from lg_eval.labels._split import EXAMPLES_FRACTION, case_hash
from lg_eval.labels._table import read_rows

Subject = tuple[str, str, int] | str
"""A run's case ``(run_id, case_id, repetition)``, or a thread id."""


@dataclass(frozen=True)
class PairedLabel:
    """One case judged by the key and labelled by people."""

    case: str
    """The case (its id, or the thread's): what a bootstrap resamples and a split assigns."""
    run_id: str
    case_id: str
    repetition: int
    thread_id: str | None
    judge: bool
    """The key's verdict."""
    row: str = field(repr=False)
    """The key's stored feedback row (JSON), read only when asked (:attr:`feedback`)."""
    store: str = field(repr=False)
    human: bool
    human_score: float | None
    note: str | None
    labelers: tuple[str, ...]
    sources: tuple[str, ...]
    labels: int
    """How many labels the person's side sums up (1 for a whole-case label)."""

    @cached_property
    def feedback(self) -> ScoreRow:
        """The key's whole feedback: its score and the judge's comment.

        Raises:
            StoreError: the stored row does not read.
        """
        return _score(self.store, self.row)


@dataclass
class Pairing:
    """The pairs, and what could not be paired."""

    pairs: list[PairedLabel] = field(default_factory=list)
    labels: int = 0
    """Labels of the key read (after the split)."""
    unpaired: int = 0
    """Labelled cases with no verdict of the key to pair with (or no pass/fail sum)."""


def paired_labels(
    store: ResultStore,
    key: str,
    *,
    label_key: str | None = None,
    runs: Sequence[str] | None = None,
    split: Split = "all",
    fraction: float = EXAMPLES_FRACTION,
    salt: str = "",
) -> Pairing:
    """The labels of ``label_key`` (default ``key``) paired with ``key``'s verdicts."""
    wanted = label_key or key
    rows = store.query(
        "SELECT label FROM lg_eval_labels WHERE key = ? ORDER BY labeled_at, run_id, case_id,"
        " repetition, thread_id, turn, item, labeler",
        (wanted,),
    )
    labels = [
        label
        for label in read_rows(store, [text for (text,) in rows])
        if split == "all" or (case_hash(label.case, salt) < fraction) == (split == "examples")
    ]
    scope = None if runs is None else set(runs)
    subjects: dict[Subject, list[Label]] = {}
    for label in labels:
        subject = _subject(label, scope)
        if subject is not None:
            subjects.setdefault(subject, []).append(label)
    verdicts: Found = (
        _case_verdicts(store, key, wanted, scope)
        if any(isinstance(s, tuple) for s in subjects)
        else {}
    )
    if any(isinstance(s, str) for s in subjects):
        verdicts.update(_thread_verdicts(store, key, wanted, scope))
    pairing = Pairing(labels=len(labels))
    judged: dict[tuple[str, str, int], tuple[tuple[bool, str], list[Label]]] = {}
    for subject, group in subjects.items():
        found = verdicts.get(subject)
        if found is None:
            pairing.unpaired += 1
            continue
        where, said = found  # a thread's labels and its case's, on one verdict: one side
        judged.setdefault(where, (said, []))[1].extend(group)
    for (run_id, case_id, repetition), ((judge, row), group) in judged.items():
        human = _human(group)
        verdict = None if human is None else human[0]
        if human is None or not isinstance(verdict, bool):  # no pass/fail to set beside it
            pairing.unpaired += 1
            continue
        _, score, note, count = human
        pairing.pairs.append(
            PairedLabel(
                case=group[0].case,
                run_id=run_id,
                case_id=case_id,
                repetition=repetition,
                thread_id=next((label.thread_id for label in group if label.thread_id), None),
                judge=judge,
                row=row,
                store=store.url,
                human=verdict,
                human_score=score,
                note=note,
                labelers=tuple(dict.fromkeys(label.labeler for label in group)),
                sources=tuple(dict.fromkeys(label.source for label in group)),
                labels=count,
            )
        )
    return pairing


def _subject(label: Label, scope: set[str] | None) -> Subject | None:
    in_scope = scope is None or label.run_id in scope
    if label.run_id is not None and label.case_id is not None and in_scope:
        return (label.run_id, label.case_id, label.repetition)
    return label.thread_id


def _human(group: list[Label]) -> tuple[bool | str, float | None, str | None, int] | None:
    """The person's side of a case: its newest whole-case label, else the sum of its finer
    pass/fail labels; None when it has neither."""
    whole = [label for label in group if label.whole and label.verdict is not None]
    if whole:
        newest = max(whole, key=lambda label: label.labeled_at)
        score = None if newest.score is None else float(newest.score)
        return newest.verdict, score, newest.note, 1  # type: ignore[return-value]
    finer = [label for label in group if label.verdict is not None]
    if not finer or not all(isinstance(label.verdict, bool) for label in finer):
        return None
    failed = [label for label in finer if label.verdict is False]
    notes = [f"{_unit(label)}: {label.note}" if label.note else _unit(label) for label in failed]
    return not failed, None, "; ".join(notes) or None, len(finer)


def _unit(label: Label) -> str:
    parts = [] if label.turn is None else [f"turn {label.turn + 1}"]
    decision = (label.metadata or {}).get("decision")
    call = (label.metadata or {}).get("call")
    name = call.get("name") if isinstance(call, dict) else None
    if name:
        parts.append(f"{decision} {name}" if decision else str(name))
    elif label.item:
        parts.append(label.item)
    return " ".join(parts) or "a part"


Found = dict[Subject, tuple[tuple[str, str, int], tuple[bool, str]]]
"""Per subject: the case scored, the key's verdict there and its feedback row."""


def _case_verdicts(store: ResultStore, key: str, label_key: str, scope: set[str] | None) -> Found:
    """The key's verdict on each labelled run case (its first row of the key with one)."""
    runs, params = _within(scope, "l.run_id")
    rows = store.query(
        "SELECT DISTINCT l.run_id, l.case_id, l.repetition, s.idx, s.passed, s.row"
        " FROM lg_eval_labels l JOIN lg_eval_scores s ON s.run_id = l.run_id"
        " AND s.case_id = l.case_id AND s.repetition = l.repetition AND s.key = ?"
        f" AND s.passed IS NOT NULL WHERE l.key = ? AND l.run_id <> ''{runs}"
        " ORDER BY l.run_id, l.case_id, l.repetition, s.idx",
        (key, label_key, *params),
    )
    found: Found = {}
    for run_id, case_id, repetition, _, passed, text in rows:
        subject = (str(run_id), str(case_id), int(repetition))
        if subject not in found:
            found[subject] = (subject, (bool(passed), str(text)))
    return found


def _thread_verdicts(store: ResultStore, key: str, label_key: str, scope: set[str] | None) -> Found:
    """The key's newest verdict on each labelled thread: a case whose id is the thread's."""
    runs, params = _within(scope, "c.run_id")
    rows = store.query(
        "SELECT l.thread_id, r.started_at, s.run_id, s.repetition, s.idx, s.passed, s.row"
        " FROM (SELECT DISTINCT thread_id FROM lg_eval_labels WHERE key = ?"
        " AND thread_id <> '') l JOIN lg_eval_cases c ON c.case_id = l.thread_id"
        f"{runs} JOIN lg_eval_runs r ON r.run_id = c.run_id JOIN lg_eval_scores s"
        " ON s.run_id = c.run_id AND s.case_id = c.case_id AND s.repetition = c.repetition"
        " AND s.key = ? AND s.passed IS NOT NULL"
        " ORDER BY l.thread_id, r.started_at DESC, s.run_id DESC, s.repetition, s.idx",
        (label_key, *params, key),
    )
    found: Found = {}
    for thread_id, _, run_id, repetition, _, passed, text in rows:
        subject = str(thread_id)
        if subject not in found:
            found[subject] = ((str(run_id), subject, int(repetition)), (bool(passed), str(text)))
    return found


def _score(store: str, text: str) -> ScoreRow:
    try:
        return ScoreRow.model_validate_json(text)
    except ValidationError:
        raise StoreError(
            f"the results store {store} holds a feedback row that lg_eval cannot read: "
            "it was changed or written by something else; delete its run, or restore the "
            "store from a backup."
        ) from None


def _within(scope: set[str] | None, column: str) -> tuple[str, list[str]]:
    if scope is None:
        return "", []
    ordered = sorted(scope)
    return f" AND {column} IN ({', '.join('?' for _ in ordered) or 'NULL'})", ordered
