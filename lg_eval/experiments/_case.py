"""One case × repetition, start to finish, as one effect core (sync and async alike).

:func:`run_case` plays the case on a fresh thread, extracts the thread, runs
the evaluators and returns the :class:`CaseResult`, retrying the whole attempt
on a new thread after an infrastructure error (a lost connection, an
``OperationalError``), never after a low score. Every I/O step is an
:class:`~lg_eval._effects.Effect`, so :func:`~lg_eval._effects.drive` runs it
with blocking calls and :func:`~lg_eval._effects.adrive` awaits it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from pydantic_core import to_jsonable_python

from lg_eval._effects import Core, sleep
from lg_eval.errors import InfrastructureError
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments._upstream import Case, Graph, PlayedCase, Reviewer, Saver, playing
from lg_eval.experiments.judge_cache import CASE_STATS, CacheStats
from lg_eval.experiments.redaction import Redactor, redacted
from lg_eval.experiments.results import CaseResult, PlayedTurnRecord, SimulationRecord
from lg_eval.experiments.scoring import (
    CaseEvaluator,
    EvaluatorResolver,
    reference_of,
    score_thread,
)
from lg_eval.extract import ExtractionWarning, ambiguous_resumes
from lg_eval.feedback import describe_error
from lg_eval.trajectory import ThreadTrajectory

INFRASTRUCTURE = frozenset({"OperationalError", "InterfaceError", "PoolTimeout"})
"""Exception class names (anywhere in the MRO) that mean the infrastructure failed."""


def is_infrastructure(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying: a connection error or an ``OperationalError``."""
    if isinstance(exc, ConnectionError | InfrastructureError):
        return True
    return any(cls.__name__ in INFRASTRUCTURE for cls in type(exc).__mro__)


class CaseOptions(Protocol):
    """What a case takes of a run's options (:class:`~lg_eval.experiments.RunOptions`)."""

    @property
    def thresholds(self) -> Mapping[str, float] | None: ...
    @property
    def require_verdict(self) -> bool: ...
    @property
    def retries(self) -> int: ...
    @property
    def reviewer(self) -> Reviewer | None: ...


@dataclass(frozen=True)
class CaseContext:
    """What every case of a run shares."""

    run_id: str
    targets: CaseTargets
    saver: Saver
    thresholds: Mapping[str, float]
    retries: int
    redactor: Redactor | None
    resume_threads: bool
    """The run resumes: a case's thread may hold turns a killed run finished."""
    reviewer: Reviewer | None = None
    """Answers turns written ``resume: {reviewer: true}`` (a simulated human)."""
    require_verdict: bool = False
    """A no-verdict fails the case (:func:`~lg_eval.experiments.scoring.status_of`)."""

    @classmethod
    def of_run(
        cls,
        options: CaseOptions,
        *,
        run_id: str,
        targets: CaseTargets,
        saver: Saver,
        redactor: Redactor | None,
        resume_threads: bool,
    ) -> CaseContext:
        """The context of a run's cases as its options give it: the runner's inline play
        and each executor partition share it (the scoring process rebuilds it from its
        spec, which carries the same options)."""
        return cls(
            run_id=run_id,
            targets=targets,
            saver=saver,
            thresholds=dict(options.thresholds or {}),
            require_verdict=options.require_verdict,
            retries=options.retries,
            redactor=redactor,
            reviewer=options.reviewer,
            resume_threads=resume_threads,
        )


@dataclass(frozen=True)
class CasePlan:
    """One case × repetition to run, with its evaluators and reference."""

    ordinal: int
    case: Case
    repetition: int
    evaluators: list[CaseEvaluator]
    reference: dict[str, Any] | None


def plan_for(resolver: EvaluatorResolver, ordinal: int, case: Case, repetition: int) -> CasePlan:
    """Case ``ordinal`` × ``repetition`` of a run, with its evaluators and reference."""
    return CasePlan(ordinal, case, repetition, resolver.for_case(case), reference_of(case.expected))


def thread_id_for(run_id: str, case_id: str, repetition: int, attempt: int) -> str:
    return f"{run_id}:{case_id}:{repetition}:{attempt}"


@dataclass(frozen=True)
class PlayedAttempt:
    """One attempt's play as plain data: all that scoring it needs, so that it can be scored
    here or handed to the scoring process (:mod:`._scoring_process`)."""

    thread_id: str
    attempt: int
    turns: list[PlayedTurnRecord]
    config: dict[str, Any]
    error: str | None
    """The player's record of a turn that raised (``"Type: message"``), if one did."""
    simulation: SimulationRecord | None = None
    """The simulated conversation, when the case has a simulated user."""


def run_case(ctx: CaseContext, plan: CasePlan) -> Core[CaseResult]:
    """The case's result, played and scored here; never raises for a case-level problem
    (the status says it)."""
    started = time.perf_counter()
    cache_stats = CacheStats()
    CASE_STATS.set(cache_stats)

    def attempt(thread_id: str, number: int) -> Core[CaseResult]:
        graph = ctx.targets.for_case(plan.case)
        played = yield from play_attempt(ctx, plan, graph, thread_id, number)
        return (yield from score_attempt(ctx, plan, graph, played))

    result, attempts = yield from retrying(ctx, plan, attempt)
    return finish(ctx, result, attempts, time.perf_counter() - started, cache_stats)


T = TypeVar("T")


def retrying(
    ctx: CaseContext, plan: CasePlan, attempt: Callable[[str, int], Core[T]]
) -> Core[tuple[T | CaseResult, int]]:
    """``attempt(thread_id, number)`` on a fresh thread each time, again after an
    infrastructure error while retries are left (after a short backoff); the outcome (the
    :func:`failed_attempt` result once an attempt raised for good) and the attempts made."""
    number = 0
    while True:
        number += 1
        thread_id = thread_id_for(ctx.run_id, plan.case.id, plan.repetition, number)
        try:
            return (yield from attempt(thread_id, number)), number
        except Exception as exc:
            if not retryable(ctx, exc, number):
                return failed_attempt(ctx, plan, thread_id, exc), number
        yield sleep(min(0.05 * 2 ** (number - 1), 2.0))


def retryable(ctx: CaseContext, exc: BaseException, attempt: int) -> bool:
    """Whether attempt number ``attempt``, which raised ``exc``, is played again."""
    return is_infrastructure(exc) and attempt <= ctx.retries


def play_attempt(
    ctx: CaseContext, plan: CasePlan, graph: Graph, thread_id: str, attempt: int
) -> Core[PlayedAttempt]:
    """Play the case's turns on ``graph`` (the case's target, bound to the run's
    checkpointer) on ``thread_id``; when the run resumes, a thread a killed run left goes on
    from its last finished turn (:func:`~lg_eval.play.playing`, ``resume=True``), but on a
    server, where the case is played again on a new thread (:meth:`CaseTargets.thread_for`)."""
    thread_id, resume = yield from ctx.targets.thread_for(thread_id, resuming=ctx.resume_threads)
    played = yield from playing(
        graph,
        plan.case,
        thread_id=thread_id,
        reviewer=ctx.reviewer,
        resume=resume,
        repetition=plan.repetition,
    )
    turns, config = turn_records(played), dict(played.config)
    return PlayedAttempt(thread_id, attempt, turns, config, played.error, simulation_of(played))


def score_attempt(
    ctx: CaseContext, plan: CasePlan, graph: Graph, played: PlayedAttempt
) -> Core[CaseResult]:
    """Read the played thread back through ``graph``, run the case's evaluators, build the
    result.

    Raises:
        InfrastructureError: the play failed for an infrastructure reason (worth retrying).
    """
    config = cast(RunnableConfig, played.config)
    thread = yield from ctx.targets.extraction(graph, config)
    notes = case_notes(thread, played.turns)
    for note in notes:  # raised here, where the run's caller and its filters see them
        warnings.warn(note, ExtractionWarning, stacklevel=2)
    base = _base(ctx, plan, played.thread_id, played.turns)
    base.notes = notes
    base.simulation = played.simulation
    if played.error is not None:
        if played.error.partition(":")[0] in INFRASTRUCTURE:
            raise InfrastructureError(played.error)
        base.trajectory = thread.to_graph_trajectory().steps
        index = played.turns[-1].index
        base.error = f"turns[{index}] raised {played.error}; the script did not continue."
        return base
    return (
        yield from score_thread(
            base,
            thread,
            plan.evaluators,
            reference=plan.reference,
            inputs=evaluator_inputs(plan.case, played),
            thresholds=ctx.thresholds,
            require_verdict=ctx.require_verdict,
        )
    )


_ONE_RESUME = frozenset({"resume", "resume_by_node", "resume_fn"})
"""Played turns that send one ``Command(resume=...)``, whatever number of interrupts it answers."""


def case_notes(thread: ThreadTrajectory, turns: list[PlayedTurnRecord]) -> list[str]:
    """The extraction's warnings about the case's thread, without those the case's own play
    explains: a turn the script played as one resume answering several interrupts reads,
    from storage, as possibly several resumes; the player knows it was one."""
    played = [turn for turn in turns if turn.kind != "update"]  # the thread's own turns
    ours: set[str] = set()
    if len(played) == len(thread.turns):
        for turn, record in zip(thread.turns, played, strict=True):
            if record.kind in _ONE_RESUME:
                ours.update(ambiguous_resumes([turn]))
    return [note for note in thread.warnings if note not in ours]


def evaluator_inputs(case: Case, played: PlayedAttempt) -> Any:
    """What the evaluators get as ``inputs``: what each turn sent; for a case with a
    simulated user, ``{"turns": [...], "user": {persona, goal, stop, last_words}}`` (as a
    LangSmith example's inputs hold the case), so a conversation judge knows whom the agent
    served, what they wanted and how they left (their last words are never sent)."""
    sent = [turn.sent for turn in played.turns]
    if case.user is None:
        return sent
    ended = played.simulation
    user = {"persona": case.user.persona, "goal": case.user.goal}
    if ended is not None and ended.stop is not None:
        user["stop"] = ended.stop
        if ended.stop == "user" and ended.detail:
            user["last_words"] = ended.detail
    return {"turns": sent, "user": user}


def finish(
    ctx: CaseContext, result: CaseResult, attempts: int, latency: float, cache_stats: CacheStats
) -> CaseResult:
    """The result as stored: attempts, latency, model calls net of judge-cache hits, the
    finishing time, strings redacted."""
    result.attempts = attempts
    result.latency_s = latency
    result.model_calls = max(0, result.model_calls - cache_stats.hits)
    result.finished_at = datetime.now(UTC)
    return redacted(result, ctx.redactor)


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
            by=turn.by,
            reply=turn.reply,
        )
        for turn in played.turns
    ]


def simulation_of(played: PlayedCase | None) -> SimulationRecord | None:
    """The simulated conversation ``played`` holds (None when no simulated user spoke)."""
    usage = None if played is None else played.simulator_usage
    ended = None if played is None else played.conversation
    if played is None or (usage is None and ended is None):
        return None
    return SimulationRecord(
        stop=None if ended is None else ended.reason,
        detail=None if ended is None else ended.detail,
        user_turns=sum(turn.by == "user" for turn in played.turns),
        calls=0 if usage is None else usage.calls,
        tokens=0 if usage is None else usage.total_tokens,
        cost=None if usage is None else usage.cost,
        latency_s=0.0 if usage is None else usage.latency_s,
    )


def _base(
    ctx: CaseContext, plan: CasePlan, thread_id: str, turns: list[PlayedTurnRecord]
) -> CaseResult:
    expected = plan.case.expected
    calls = expected.model_dump(mode="json", include={"tool_calls"})["tool_calls"]
    output = expected.output
    return CaseResult(
        run_id=ctx.run_id,
        case_id=plan.case.id,
        repetition=plan.repetition,
        status="error",
        tags=list(plan.case.tags),
        thread_id=thread_id,
        turns=turns,
        expected_trajectory=expected.trajectory.steps if expected.trajectory is not None else None,
        expected_tool_calls=calls,
        expected_output=(
            output
            if isinstance(output, str) or output is None
            else output.model_dump(mode="json", exclude_none=True)
        ),
    )


def failed_attempt(
    ctx: CaseContext, plan: CasePlan, thread_id: str, exc: BaseException
) -> CaseResult:
    """The result of an attempt that raised ``exc`` (the turns played before it, if known)."""
    played = getattr(exc, "played", None)
    played = played if isinstance(played, PlayedCase) else None
    result = _base(ctx, plan, thread_id, turn_records(played))
    result.simulation = simulation_of(played)
    result.error = describe_error(exc)
    return result


def timed_out(ctx: CaseContext, plan: CasePlan, timeout: float) -> CaseResult:
    """The result of a case cancelled after ``timeout`` seconds."""
    result = _base(ctx, plan, thread_id_for(ctx.run_id, plan.case.id, plan.repetition, 1), [])
    result.status = "timeout"
    result.error = f"The case ran past the {timeout:g} s timeout and was cancelled."
    result.latency_s = timeout
    result.finished_at = datetime.now(UTC)
    return result


__all__ = [
    "CaseContext",
    "CasePlan",
    "InfrastructureError",
    "PlayedAttempt",
    "case_notes",
    "evaluator_inputs",
    "failed_attempt",
    "finish",
    "is_infrastructure",
    "plan_for",
    "play_attempt",
    "retryable",
    "retrying",
    "run_case",
    "score_attempt",
    "simulation_of",
    "thread_id_for",
    "timed_out",
]
