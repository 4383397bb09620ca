"""``replay_threads``: what would the new graph have done from this point of real threads?

For each selected thread of the production checkpointer: find the fork checkpoint
(:mod:`lg_eval.replay._fork`), copy the thread up to it onto a fresh thread of the
*target* checkpointer, run the new graph from there answering its questions as the
original's humans did (:mod:`lg_eval.replay._drive`), extract both threads, score them
with the same evaluators and record what changed (:mod:`lg_eval.replay._result`).

The production checkpointer is only read (``list``, ``get_tuple``,
``get_state_history``); every write goes to the target, on thread
``replay:<run>:<thread_id>`` and its marker (:mod:`lg_eval.replay._state`), which makes a
named replay incremental.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import SkipValidation, Strict

from lg_eval._arguments import Count, Flag, Size, Text, validated
from lg_eval._describe import describe_error
from lg_eval._effects import drive
from lg_eval._urls import redact_url
from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.executors import LocalExecutor
from lg_eval.experiments import CaseEvaluator
from lg_eval.play import resolve_target
from lg_eval.replay import _state as state
from lg_eval.replay._drive import OnNewQuestion, Reviewer, replaying
from lg_eval.replay._fork import (
    ForkSpec,
    copy_until,
    describe_missing,
    find_fork,
    recorded_humans,
    root_history,
)
from lg_eval.replay._result import ReplayedThread, ReplayResult
from lg_eval.replay._savers import (
    all_threads,
    named_threads,
    open_saver,
    refuse_production_target,
)
from lg_eval.replay._scores import score_changes, scored
from lg_eval.sweeps._listing import parse_time
from lg_eval.sweeps._worker import refuse_reference_needers, resolve_evaluators

DEFAULT_TARGET = "memory://"


@validated
def replay_threads(
    graph: Any,
    checkpointer: Any,
    *,
    baseline: Any = None,
    thread_ids: Sequence[Annotated[str, Strict()]] | None = None,
    fork: str = "last-interrupt",
    target: Any = DEFAULT_TARGET,
    evaluators: SkipValidation[Sequence[Any]] = ("redundancy",),
    on_new_question: OnNewQuestion = "stop",
    reviewer: SkipValidation[Reviewer | None] = None,
    since: SkipValidation[str | datetime | timedelta | None] = None,
    until: SkipValidation[str | datetime | timedelta | None] = None,
    metadata: Mapping[str, Any] | None = None,
    limit: Size | None = None,
    run: Text | None = None,
    incremental: Flag = True,
    concurrency: Count = 1,
    progress: Callable[[int, int], None] | None = None,
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
    given). With ``incremental`` (default), a fork the same ``run`` finished before at the
    thread's current newest checkpoint is reused (scored again, not rerun); every other
    fork of that name in the target is replaced. ``on_new_question``: ``"stop"`` or
    ``"reviewer"`` (then ``reviewer`` answers what the original never did).
    ``concurrency``: threads replayed at once, in a thread pool (the savers and graphs
    must allow use from several threads: a SQLite connection opened with
    ``check_same_thread=False``, as checkpointer URLs are). ``progress(done, total)`` is
    called as each thread is done.
    """
    spec = ForkSpec.parse(fork)
    if on_new_question == "reviewer" and reviewer is None:
        raise InvalidOptionError("on_new_question='reviewer' needs reviewer= (SimulatedReviewer).")
    if thread_ids is not None and (since is not None or until is not None or metadata):
        raise InvalidOptionError(
            "thread_ids names the threads to replay; since, until and metadata choose among "
            "all threads, so they would be ignored: pass one or the other."
        )
    refuse_reference_needers(evaluators)
    scoring = [CaseEvaluator(name, e) for name, e in resolve_evaluators(evaluators)]
    with ExitStack() as stack:
        source = open_saver(stack, checkpointer, "checkpointer", existing=True)
        refuse_production_target(source, target)  # before the target is opened or set up
        sink = open_saver(stack, target, "target")
        result = ReplayResult(
            graph=graph if isinstance(graph, str) else _name(graph),
            fork=str(spec),
            target=_shown(target),
            run=run or new_run_name(),
        )
        job = _Job(
            spec=spec,
            source=source,
            sink=sink,
            reading=resolve_target(baseline if baseline is not None else graph, source),
            new=resolve_target(graph, sink),
            scoring=scoring,
            run=result.run,
            label=result.graph,
            incremental=incremental,
            on_new_question=on_new_question,
            reviewer=reviewer,
        )
        ids = sorted(
            named_threads(source, thread_ids, _shown(checkpointer))
            if thread_ids is not None
            else all_threads(source, parse_time(since), parse_time(until), metadata)
        )
        chosen = ids[:limit] if limit is not None else ids
        rows = []
        for row in LocalExecutor(concurrency).map_partitions(job.replay, chosen):
            rows.append(row)
            if progress is not None:
                progress(len(rows), len(chosen))
        result.threads.extend(sorted(rows, key=lambda row: row.thread_id))
        return result


def new_run_name() -> str:
    """A replay's name when none is given (``run=``): eight random hex digits."""
    return secrets.token_hex(4)


@dataclass(frozen=True)
class _Job:
    """One replay call's settings; :meth:`replay` does one thread."""

    spec: ForkSpec
    source: Any
    sink: Any
    reading: Any
    new: Any
    scoring: list[CaseEvaluator]
    run: str
    label: str
    incremental: bool
    on_new_question: OnNewQuestion
    reviewer: Reviewer | None

    def replay(self, thread_id: str) -> ReplayedThread:
        """Fork ``thread_id`` (or reuse its finished fork), run the new graph, score both."""
        history = root_history(self.reading, thread_id)
        row = ReplayedThread(thread_id=thread_id, status="skipped", fork=str(self.spec))
        if not history:
            row.reason = "no such thread in the checkpointer"
            return row
        at = find_fork(history, self.spec)
        if at is None:
            row.reason = describe_missing(self.spec)
            return row
        row.fork_checkpoint_id = history[at].config["configurable"]["checkpoint_id"]
        row.replay_thread_id = fresh = state.fork_thread(self.run, thread_id)
        key = {
            "head": history[-1].config["configurable"]["checkpoint_id"],
            "fork": str(self.spec),
            "graph": self.label,
        }
        kept = state.finished(self.sink, self.run, thread_id, key) if self.incremental else None
        if kept is not None:
            row = row.model_copy(update={**kept, "reused": True})
        else:
            self._fork_and_run(thread_id, history, at, row)
            state.mark(self.sink, self.run, thread_id, key, row)
        try:
            old, now = (
                scored(self.reading, thread_id, self.scoring),
                scored(self.new, fresh, self.scoring),
            )
        except LgEvalError as exc:  # a thread the readers refuse is this thread's error
            row.status, row.reason = "error", describe_error(exc)
            return row
        row.old_steps, row.new_steps = old.trajectory or [], now.trajectory or []
        row.scores = score_changes(old.scores, now.scores)
        return row

    def _fork_and_run(
        self, thread_id: str, history: list[Any], at: int, row: ReplayedThread
    ) -> None:
        """Copy the thread up to the fork onto a fresh fork thread and run the new graph."""
        assert row.fork_checkpoint_id is not None and row.replay_thread_id is not None
        state.forget(self.sink, self.run, thread_id)  # an outdated or unfinished fork
        humans = recorded_humans(self.source, history, at, self.spec)
        turn = self.spec.kind == "turn"
        copy_until(self.source, self.sink, thread_id, row.fork_checkpoint_id,
                   row.replay_thread_id, inclusive=not turn)  # fmt: skip
        outcome = drive(replaying(self.new, row.replay_thread_id, humans,
                                  on_new_question=self.on_new_question, reviewer=self.reviewer,
                                  opening="input" if turn else "continue"))  # fmt: skip
        row.status, row.reason = outcome.status, outcome.reason
        row.graph_calls, row.reviewer_answers = outcome.calls, outcome.reviewer_answers
        row.unused_answers, row.questions_changed = humans.unused(), outcome.changed


def _shown(saver: Any) -> str:
    """A saver as a result or message shows it: its URL without password, or its type."""
    return redact_url(saver) if isinstance(saver, str) else type(saver).__name__


def _name(graph: Any) -> str:
    """The graph as the result and the incremental marker name it: a compiled graph's name,
    a factory's ``module:qualname``, else its type."""
    name = getattr(graph, "name", None)
    if isinstance(name, str) and name:
        return name
    qualname = getattr(graph, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{getattr(graph, '__module__', '?')}:{qualname}"
    return type(graph).__name__
