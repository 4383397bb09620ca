"""``replay_threads``: what would the new graph have done from this point of real threads?

For each selected thread of the production checkpointer: find the fork checkpoint
(:mod:`lg_eval.replay.fork`), copy the thread up to it onto a fresh thread of the
*target* checkpointer, run the new graph from there answering its questions as the
original's humans did (:mod:`lg_eval.replay.drive`), extract both threads, score them
with the same evaluators and record what changed (:mod:`lg_eval.replay.result`).

The production checkpointer is only read (``list``, ``get_tuple``,
``get_state_history``); every write goes to the target, on thread
``replay:<run>:<thread_id>``.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime, timedelta
from typing import Any

from lg_eval._effects import drive
from lg_eval.errors import InvalidOptionError, SweepError
from lg_eval.experiments import CaseEvaluator, CaseResult, ScoreRow, score_thread
from lg_eval.extract import extract_thread
from lg_eval.feedback import is_finite_number
from lg_eval.play import open_checkpointer, resolve_target
from lg_eval.replay.drive import OnNewQuestion, Reviewer, replaying
from lg_eval.replay.fork import (
    ForkSpec,
    copy_until,
    describe_missing,
    find_fork,
    recorded_humans,
    root_history,
)
from lg_eval.replay.result import ReplayedThread, ReplayResult, ScoreChange
from lg_eval.sweeps.listing import list_threads, parse_time, saver_kind
from lg_eval.sweeps.worker import refuse_reference_needers, resolve_evaluators
from lg_eval.urls import redact_url

DEFAULT_TARGET = "memory://"


def replay_threads(
    graph: Any,
    checkpointer: Any,
    *,
    baseline: Any = None,
    thread_ids: Sequence[str] | None = None,
    fork: str = "last-interrupt",
    target: Any = DEFAULT_TARGET,
    evaluators: Sequence[Any] = ("redundancy",),
    on_new_question: OnNewQuestion = "stop",
    reviewer: Reviewer | None = None,
    since: str | datetime | timedelta | None = None,
    until: str | datetime | timedelta | None = None,
    metadata: Mapping[str, Any] | None = None,
    limit: int | None = None,
    run: str | None = None,
) -> ReplayResult:
    """Fork the production threads of ``checkpointer`` and replay them with ``graph``.

    ``graph``: the new version (compiled graph, builder, factory or ``"module:attr"``).
    ``checkpointer``: the production saver or its URL; only read. ``baseline``: the graph
    that wrote those threads, used to read them (default: ``graph``; give it when the new
    version renamed or removed nodes). ``thread_ids``: these threads; otherwise every
    thread (SQLite / Postgres: filtered like a sweep by ``since`` / ``until`` /
    ``metadata``; any other saver: every thread its ``list`` yields), at most ``limit``,
    in thread id order. ``since`` / ``until``: the time of a thread's newest checkpoint,
    as for a sweep (``24h``, ISO 8601, a datetime, or a timedelta before now).
    ``fork``: ``last-interrupt`` (default), ``turn:N`` or ``before:NODE``. ``target``: the
    saver or URL the replay threads are written to (default ``memory://``: gone when the
    call returns); threads are named ``replay:<run>:<thread_id>`` (``run``: random unless
    given; a target thread that exists already is refused). ``on_new_question``:
    ``"stop"`` or ``"reviewer"`` (then ``reviewer`` answers what the original never did).
    """
    spec = ForkSpec.parse(fork)
    if on_new_question not in ("stop", "reviewer"):
        raise InvalidOptionError(f"on_new_question={on_new_question!r}: use 'stop' or 'reviewer'.")
    if on_new_question == "reviewer" and reviewer is None:
        raise InvalidOptionError("on_new_question='reviewer' needs reviewer= (SimulatedReviewer).")
    if limit is not None and limit < 0:
        raise InvalidOptionError(f"limit={limit}: at least 0.")
    refuse_reference_needers(evaluators)
    scoring = [CaseEvaluator(name, e) for name, e in resolve_evaluators(evaluators)]
    token = run or secrets.token_hex(4)
    with ExitStack() as stack:
        source = _saver(stack, checkpointer, "checkpointer")
        sink = _saver(stack, target, "target")
        if _same_storage(source, sink):
            raise InvalidOptionError(
                "target: the replay threads go to another checkpointer than the production one "
                "(default memory://); pass a different saver or URL."
            )
        new = resolve_target(graph, sink)
        reading = resolve_target(baseline if baseline is not None else graph, source)
        ids = (
            list(thread_ids)
            if thread_ids is not None
            else _all_threads(source, parse_time(since), parse_time(until), metadata)
        )
        result = ReplayResult(
            graph=graph if isinstance(graph, str) else _name(graph),
            fork=str(spec),
            target=redact_url(target) if isinstance(target, str) else type(target).__name__,
        )
        for thread_id in sorted(ids)[:limit] if limit is not None else sorted(ids):
            result.threads.append(
                _replay_one(
                    thread_id,
                    spec,
                    source,
                    sink,
                    reading,
                    new,
                    scoring,
                    token,
                    on_new_question,
                    reviewer,
                )
            )
        return result


def _replay_one(
    thread_id: str,
    spec: ForkSpec,
    source: Any,
    sink: Any,
    reading: Any,
    new: Any,
    scoring: list[CaseEvaluator],
    token: str,
    on_new_question: OnNewQuestion,
    reviewer: Reviewer | None,
) -> ReplayedThread:
    history = root_history(reading, thread_id)
    row = ReplayedThread(thread_id=thread_id, status="skipped", fork=str(spec))
    if not history:
        row.reason = "no such thread in the checkpointer"
        return row
    at = find_fork(history, spec)
    if at is None:
        row.reason = describe_missing(spec)
        return row
    fork_id = history[at].config["configurable"]["checkpoint_id"]
    fresh = f"replay:{token}:{thread_id}"
    if sink.get_tuple({"configurable": {"thread_id": fresh}}) is not None:
        raise InvalidOptionError(
            f"target thread {fresh!r} exists already: give another run= or an empty target."
        )
    humans = recorded_humans(source, history, at, spec)
    turn = spec.kind == "turn"
    copy_until(source, sink, thread_id, fork_id, fresh, inclusive=not turn)
    first = humans.inputs.popleft() if turn else None
    outcome = drive(replaying(new, fresh, humans, on_new_question=on_new_question,
                              reviewer=reviewer, first=first))  # fmt: skip
    row.status, row.reason = outcome.status, outcome.reason
    row.fork_checkpoint_id, row.replay_thread_id = fork_id, fresh
    row.graph_calls, row.reviewer_answers = outcome.calls, outcome.reviewer_answers
    row.unused_answers = humans.unused()
    old = _scored(reading, thread_id, scoring)
    now = _scored(new, fresh, scoring)
    row.old_steps, row.new_steps = old.trajectory or [], now.trajectory or []
    row.scores = score_changes(old.scores, now.scores)
    return row


def _scored(graph: Any, thread_id: str, scoring: list[CaseEvaluator]) -> CaseResult:
    """``thread_id`` of ``graph`` extracted and scored by the one scoring step."""
    thread = extract_thread(graph, {"configurable": {"thread_id": thread_id}})
    result = CaseResult(run_id="replay", case_id=thread_id, status="error", thread_id=thread_id)
    return drive(score_thread(result, thread, scoring, thresholds={}))


def score_changes(before: list[ScoreRow], after: list[ScoreRow]) -> list[ScoreChange]:
    """The rows of both sides paired by (evaluator, key), the original's order first; an
    evaluator that raised on a side has no score there and its error as the reason."""
    pending = {(r.evaluator, r.key): r for r in after}
    pairs: list[tuple[ScoreRow | None, ScoreRow | None]] = [
        (row, pending.pop((row.evaluator, row.key), None)) for row in before
    ]
    pairs.extend((None, row) for row in pending.values())
    changes = []
    for old, new in pairs:
        named = old if old is not None else new
        assert named is not None
        errors = [f"{side}: {r.error}" for side, r in (("old", old), ("new", new)) if r and r.error]
        changes.append(
            ScoreChange(
                evaluator=named.evaluator,
                key=named.key,
                old=_number(old.score) if old else None,
                new=_number(new.score) if new else None,
                reason="; ".join(errors) or None,
            )
        )
    return changes


def _number(score: Any) -> float | None:
    """A pass/fail score as 1.0 / 0.0, a finite number as itself; anything else None."""
    if isinstance(score, bool):
        return 1.0 if score else 0.0
    return float(score) if is_finite_number(score) else None


def _saver(stack: ExitStack, saver: Any, what: str) -> Any:
    if isinstance(saver, str):
        return stack.enter_context(open_checkpointer(saver))
    if saver is None or not hasattr(saver, "put"):
        raise InvalidOptionError(f"{what}: a checkpointer (saver) or its URL, not {saver!r}.")
    return saver


def _same_storage(a: Any, b: Any) -> bool:
    """Whether two savers write to one place: the same object, the same SQLite file, or the
    same Postgres database (host, port, name)."""
    if a is b:
        return True
    where_a, where_b = _storage_of(a), _storage_of(b)
    return where_a is not None and where_a == where_b


def _storage_of(saver: Any) -> tuple[str, ...] | None:
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        files = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
        return ("sqlite", os.path.realpath(files[0])) if files and files[0] else None
    info = getattr(conn, "info", None)  # a psycopg Connection (a pool has none)
    if info is not None and hasattr(info, "dbname"):
        return ("postgres", str(info.host), str(info.port), str(info.dbname))
    return None


def _all_threads(
    saver: Any,
    since: datetime | None,
    until: datetime | None,
    metadata: Mapping[str, Any] | None,
) -> list[str]:
    try:
        saver_kind(saver)
    except SweepError:
        if since or until or metadata:
            raise
        return sorted({t.config["configurable"]["thread_id"] for t in _roots(saver)})
    pages = list_threads(saver, since=since, until=until, metadata=metadata)
    return [head.thread_id for page in pages for head in page]


def _roots(saver: Any) -> Iterator[Any]:
    for tup in saver.list(None):
        if tup.config["configurable"].get("checkpoint_ns", "") == "":
            yield tup


def _name(graph: Any) -> str:
    return str(getattr(graph, "name", None) or type(graph).__name__)


__all__ = ["DEFAULT_TARGET", "replay_threads"]
