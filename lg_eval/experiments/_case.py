"""One case × repetition, start to finish, as one effect core (sync and async alike).

:func:`run_case` plays the case on a fresh thread, extracts the thread, runs
the evaluators and returns the :class:`CaseResult`, retrying the whole attempt
on a new thread after an infrastructure error (a lost connection, an
``OperationalError``), never after a low score. Every I/O step is an
:class:`~lg_eval._effects.Effect`, so :func:`~lg_eval._effects.drive` runs it
with blocking calls and :func:`~lg_eval._effects.adrive` awaits it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from pydantic_core import to_jsonable_python

from lg_eval._effects import Core, Effect, sleep
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments._upstream import Case, PlayedCase, Saver, playing
from lg_eval.experiments.judge_cache import CASE_STATS, CacheStats
from lg_eval.experiments.redaction import Redactor, redacted
from lg_eval.experiments.results import CaseResult, PlayedTurnRecord, ScoreRow
from lg_eval.experiments.scoring import (
    CaseEvaluator,
    case_outputs,
    final_messages,
    score_rows,
    status_of,
    thread_usage,
)
from lg_eval.extract.thread import extraction
from lg_eval.play import Reviewer

INFRASTRUCTURE = frozenset({"OperationalError", "InterfaceError", "PoolTimeout"})
"""Exception class names (anywhere in the MRO) that mean the infrastructure failed."""


class InfrastructureError(Exception):
    """An infrastructure failure the player recorded as a turn error instead of raising."""


def is_infrastructure(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying: a connection error or an ``OperationalError``."""
    if isinstance(exc, ConnectionError | InfrastructureError):
        return True
    return any(cls.__name__ in INFRASTRUCTURE for cls in type(exc).__mro__)


@dataclass(frozen=True)
class CaseContext:
    """What every case of a run shares."""

    run_id: str
    targets: CaseTargets
    saver: Saver
    thresholds: Mapping[str, float]
    retries: int
    redactor: Redactor | None
    fresh_threads: bool
    """Delete a thread before playing on it (a resumed run may have left one half played)."""
    reviewer: Reviewer | None = None
    """Answers turns written ``resume: {reviewer: true}`` (a simulated human)."""


@dataclass(frozen=True)
class CasePlan:
    """One case × repetition to run, with its evaluators and reference."""

    ordinal: int
    case: Case
    repetition: int
    evaluators: list[CaseEvaluator]
    reference: dict[str, Any] | None


def thread_id_for(run_id: str, case_id: str, repetition: int, attempt: int) -> str:
    return f"{run_id}:{case_id}:{repetition}:{attempt}"


async def _not_held() -> float:
    return 0.0


PLAYED: Effect[float] = Effect(lambda: 0.0, _not_held)
"""Yielded by :func:`run_case` between a case's play and its scoring. A driver may hold the
case there (:func:`lg_eval._effects.drive_until`) and send back the seconds it was held,
which are left out of the case's latency; performed normally it holds nothing."""


@dataclass
class _Held:
    seconds: float = 0.0


def run_case(ctx: CaseContext, plan: CasePlan) -> Core[CaseResult]:
    """The case's result; never raises for a case-level problem (the status says it)."""
    started = time.perf_counter()
    cache_stats = CacheStats()
    CASE_STATS.set(cache_stats)
    held = _Held()
    attempt = 0
    while True:
        attempt += 1
        thread_id = thread_id_for(ctx.run_id, plan.case.id, plan.repetition, attempt)
        try:
            result = yield from _attempt(ctx, plan, thread_id, cache_stats, held)
        except Exception as exc:
            if is_infrastructure(exc) and attempt <= ctx.retries:
                yield sleep(min(0.05 * 2 ** (attempt - 1), 2.0))
                continue
            result = _failed_attempt(ctx, plan, thread_id, exc)
        break
    result.attempts = attempt
    result.latency_s = time.perf_counter() - started - held.seconds
    result.model_calls = max(0, result.model_calls - cache_stats.hits)
    result.finished_at = datetime.now(UTC)
    return redacted(result, ctx.redactor)


def _attempt(
    ctx: CaseContext, plan: CasePlan, thread_id: str, cache_stats: CacheStats, held: _Held
) -> Core[CaseResult]:
    graph, case = ctx.targets.for_case(plan.case), plan.case
    if ctx.fresh_threads:
        yield Effect(
            functools.partial(ctx.saver.delete_thread, thread_id),
            functools.partial(ctx.saver.adelete_thread, thread_id),
        )
    played = yield from playing(graph, case, thread_id=thread_id, reviewer=ctx.reviewer)
    turns = turn_records(played)
    held.seconds += yield PLAYED
    CASE_STATS.set(cache_stats)  # other cases may have run on this thread while it was held
    thread = yield from extraction(graph, cast(RunnableConfig, played.config))
    base = _base(ctx, plan, thread_id, turns)
    base.trajectory = thread.to_graph_trajectory().steps
    if played.error is not None:
        if played.error.partition(":")[0] in INFRASTRUCTURE:
            raise InfrastructureError(played.error)
        base.error = f"turns[{turns[-1].index}] raised {played.error}; the script did not continue."
        return base
    messages = final_messages(thread)
    outputs = case_outputs(thread, messages)
    inputs = [turn.sent for turn in turns]
    usage = thread_usage(messages)
    for item in plan.evaluators:
        reference = item.reference if item.own_reference else plan.reference
        call = {"outputs": outputs, "reference_outputs": reference, "inputs": inputs}
        try:
            outcome = yield Effect(
                functools.partial(item.evaluator, **call),
                functools.partial(item.evaluator.aevaluate, **call),
            )
        except Exception as exc:
            key = item.evaluator.key
            base.scores.append(ScoreRow(evaluator=item.name, key=key, error=_describe(exc)))
            continue
        rows, judged = score_rows(item.name, outcome, ctx.thresholds)
        base.scores.extend(rows)
        usage.add(judged)
    base.tokens, base.cost, base.model_calls = usage.total_tokens, usage.cost, usage.calls
    base.status = status_of(base.scores)
    return base


def turn_records(played: PlayedCase | None) -> list[PlayedTurnRecord]:
    """The player's per-turn records, as plain JSON data."""
    if played is None:
        return []
    return [
        PlayedTurnRecord(
            index=turn.index,
            kind=str(turn.kind),
            sent=to_jsonable_python(turn.sent, fallback=repr),
            asked=to_jsonable_python(list(turn.asked), fallback=repr),
            error=turn.error,
        )
        for turn in played.turns
    ]


def _base(
    ctx: CaseContext, plan: CasePlan, thread_id: str, turns: list[PlayedTurnRecord]
) -> CaseResult:
    expected = plan.case.expected.trajectory
    return CaseResult(
        run_id=ctx.run_id,
        case_id=plan.case.id,
        repetition=plan.repetition,
        status="error",
        tags=list(plan.case.tags),
        thread_id=thread_id,
        turns=turns,
        expected_trajectory=expected.steps if expected is not None else None,
    )


def _failed_attempt(
    ctx: CaseContext, plan: CasePlan, thread_id: str, exc: BaseException
) -> CaseResult:
    played = getattr(exc, "played", None)
    result = _base(ctx, plan, thread_id, turn_records(played))
    result.error = _describe(exc)
    return result


def timed_out(ctx: CaseContext, plan: CasePlan, timeout: float) -> CaseResult:
    """The result of a case cancelled after ``timeout`` seconds."""
    result = _base(ctx, plan, thread_id_for(ctx.run_id, plan.case.id, plan.repetition, 1), [])
    result.status = "timeout"
    result.error = f"The case ran past the {timeout:g} s timeout and was cancelled."
    result.latency_s = timeout
    result.finished_at = datetime.now(UTC)
    return result


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


__all__ = [
    "CaseContext",
    "CasePlan",
    "InfrastructureError",
    "is_infrastructure",
    "run_case",
    "thread_id_for",
    "timed_out",
]
