"""One case × repetition, start to finish, and a run's cases in flight.

:func:`run_case` plays the case on a fresh thread, extracts the thread, runs the
evaluators and returns the :class:`CaseResult`, retrying the whole attempt on a new
thread after an infrastructure error (a lost connection, an ``OperationalError``),
never after a low score. Every I/O step is an :class:`~lg_eval._effects.Effect`, so
:func:`~lg_eval._effects.drive` runs it with blocking calls and
:func:`~lg_eval._effects.adrive` awaits it.

:func:`play_cases` is how a run's cases get done, locally and in each Ray worker alike:
``concurrency`` workers take plans from one shared iterator; each plays its case (on a
daemon OS thread of a :class:`~lg_eval._daemons.DaemonPool`, or awaited on the loop),
cancels it after ``timeout`` (then only the ``timeout`` result is kept), and hands it to
``finished(plan, result)`` (stored, or collected for the driver) while it plays its next.

**Which graph a case is played on** (:class:`CaseTargets`).

A case is played on the run's explicit target when one is given, else on its
own ``graph``, else on the dataset's ``graph``. A compiled graph is bound to the
run's checkpointer once and shared by its cases (a graph is reentrant across
threads); a ``StateGraph`` builder or a factory is built anew for every case, so
whatever the factory creates per graph (a model client, a scripted test double,
a cache) belongs to one case and cannot leak into another.

A :class:`~lg_eval.server.ServerTarget` (a deployed assistant) plays every case on a
fresh thread of its server, and the thread is read back from there: :meth:`CaseTargets.
thread_for` and :meth:`CaseTargets.extraction` are where a case's thread is made and
read, locally or on the server.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future as ConcurrentFuture
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from pydantic_core import to_jsonable_python

from lg_eval._daemons import DaemonPool
from lg_eval._effects import Core, adrive, drive, sleep
from lg_eval._feedback import describe_error
from lg_eval._importing import import_reference
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.datasets import Case, Dataset
from lg_eval.errors import InfrastructureError, InvalidOptionError
from lg_eval.experiments._judges import CASE_STATS, CacheStats
from lg_eval.experiments._options import RunOptions
from lg_eval.experiments._results import (
    CaseResult,
    PlayedTurnRecord,
    Redactor,
    SimulationRecord,
    make_redactor,
    redacted,
)
from lg_eval.experiments._score import CaseEvaluator, EvaluatorResolver, reference_of, score_thread
from lg_eval.extract import ExtractionWarning, ambiguous_resumes
from lg_eval.extract._thread import extraction
from lg_eval.play import Graph, PlayedCase, Reviewer, Saver, playing, resolve_target
from lg_eval.server import as_server_target

INFRASTRUCTURE = frozenset({"OperationalError", "InterfaceError", "PoolTimeout"})
"""Exception class names (anywhere in the MRO) that mean the infrastructure failed."""


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
    thresholds: Mapping[str, float]
    retries: int
    redactor: Redactor | None
    resume_threads: bool
    """The run resumes: a case's thread may hold turns a killed run finished."""
    reviewer: Reviewer | None = None
    """Answers turns written ``resume: {reviewer: true}`` (a simulated human)."""
    require_verdict: bool = False
    """A no-verdict fails the case (:func:`~lg_eval.experiments._score.status_of`)."""

    @classmethod
    def of_run(
        cls, options: RunOptions, run_id: str, targets: CaseTargets, *, resume_threads: bool
    ) -> CaseContext:
        """The context of a run's cases as its options give it (locally, or on Ray)."""
        return cls(
            run_id=run_id,
            targets=targets,
            thresholds=dict(options["thresholds"] or {}),
            retries=options["retries"],
            redactor=make_redactor(options["redact"]),
            resume_threads=resume_threads,
            reviewer=options["reviewer"],
            require_verdict=options["require_verdict"],
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


def run_case(ctx: CaseContext, plan: CasePlan) -> Core[CaseResult]:
    """The case's result: played, read back and scored on a fresh thread per attempt, again
    after an infrastructure error while retries are left (after a short backoff); never
    raises for a case-level problem (the status says it). Its latency, attempts, model calls
    net of judge-cache hits and finishing time are set, its strings redacted."""
    started = time.perf_counter()
    cache_stats = CacheStats()
    CASE_STATS.set(cache_stats)
    attempt = 0
    while True:
        attempt += 1
        thread_id = thread_id_for(ctx.run_id, plan.case.id, plan.repetition, attempt)
        try:
            result = yield from _attempt(ctx, plan, thread_id)
            break
        except Exception as exc:
            if not (is_infrastructure(exc) and attempt <= ctx.retries):
                result = failed_attempt(ctx, plan, thread_id, exc)
                break
        yield sleep(min(0.05 * 2 ** (attempt - 1), 2.0))
    result.attempts = attempt
    result.latency_s = time.perf_counter() - started
    result.model_calls = max(0, result.model_calls - cache_stats.hits)
    result.finished_at = datetime.now(UTC)
    return redacted(result, ctx.redactor)


def _attempt(ctx: CaseContext, plan: CasePlan, thread_id: str) -> Core[CaseResult]:
    """One attempt: the case's turns played on ``thread_id`` (when the run resumes, a thread
    a killed run left goes on from its last finished turn, :func:`~lg_eval.play.playing`
    with ``resume=True``; on a server the case is played again on a new thread,
    :meth:`CaseTargets.thread_for`), the thread read back, its evaluators run.

    Raises:
        InfrastructureError: the play failed for an infrastructure reason (worth retrying).
    """
    graph = ctx.targets.for_case(plan.case)
    thread_id, resume = yield from ctx.targets.thread_for(thread_id, resuming=ctx.resume_threads)
    played = yield from playing(
        graph,
        plan.case,
        thread_id=thread_id,
        reviewer=ctx.reviewer,
        resume=resume,
        repetition=plan.repetition,
    )
    turns = turn_records(played)
    thread = yield from ctx.targets.extraction(graph, cast(RunnableConfig, dict(played.config)))
    notes = case_notes(thread, turns)
    for note in notes:  # raised here, where the run's caller and its filters see them
        warnings.warn(note, ExtractionWarning, stacklevel=2)
    result = _base(ctx, plan, thread_id, turns)
    result.notes = notes
    result.simulation = simulation_of(played)
    if played.error is not None:
        if played.error.partition(":")[0] in INFRASTRUCTURE:
            raise InfrastructureError(played.error)
        result.trajectory = thread.to_graph_trajectory().steps
        result.error = (
            f"turns[{turns[-1].index}] raised {played.error}; the script did not continue."
        )
        return result
    return (
        yield from score_thread(
            result,
            thread,
            plan.evaluators,
            reference=plan.reference,
            inputs=evaluator_inputs(plan.case, turns, result.simulation),
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


def evaluator_inputs(
    case: Case, turns: list[PlayedTurnRecord], ended: SimulationRecord | None
) -> Any:
    """What the evaluators get as ``inputs``: what each turn sent; for a case with a
    simulated user, ``{"turns": [...], "user": {persona, goal, stop, last_words}}`` (as a
    LangSmith example's inputs hold the case), so a conversation judge knows whom the agent
    served, what they wanted and how they left (their last words are never sent)."""
    sent = [turn.sent for turn in turns]
    if case.user is None:
        return sent
    user = {"persona": case.user.persona, "goal": case.user.goal}
    if ended is not None and ended.stop is not None:
        user["stop"] = ended.stop
        if ended.stop == "user" and ended.detail:
            user["last_words"] = ended.detail
    return {"turns": sent, "user": user}


def turn_records(played: PlayedCase | None) -> list[PlayedTurnRecord]:
    """The player's per-turn records, as plain JSON data (built from the player's own
    values, so not validated again)."""
    if played is None:
        return []
    return [
        PlayedTurnRecord.model_construct(
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
    return CaseResult.model_construct(  # the run's and the dataset's own values, valid already
        run_id=ctx.run_id,
        case_id=plan.case.id,
        repetition=plan.repetition,
        status="error",
        tags=list(plan.case.tags),
        thread_id=thread_id,
        turns=turns,
        scores=[],
        notes=[],
        expected_trajectory=expected.trajectory.steps if expected.trajectory is not None else None,
        expected_tool_calls=calls,
        expected_output=(
            output
            if isinstance(output, str) or output is None
            else output.model_dump(mode="json", exclude_none=True)
        ),
        **_NOT_YET,
    )


_NOT_YET: dict[str, Any] = {
    "trajectory": None, "output": None, "answers": None, "tool_calls": None, "simulation": None,
    "error": None, "latency_s": 0.0, "tokens": 0, "cost": None, "model_calls": 0, "attempts": 1,
    "finished_at": None,
}  # fmt: skip
"""Every other field of a new result, given: ``model_construct`` looks up each default it
fills (and inspects a default factory's signature), which costs more than the values."""


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


# --------------------------------------------------------------------------- cases in flight

Finished = Callable[[CasePlan, CaseResult], ConcurrentFuture[None]]
"""What happens to a finished case: stored and counted, or collected for the driver. Called
on the worker's thread; the future is settled once the case is handed over."""

AHEAD = 32
"""Finished cases a worker hands over before it waits for the oldest: the writer stores
them 16 at a time, at most 50 ms after they finish; a worker waits only on a slower store."""


async def play_cases(
    plans: Iterable[CasePlan],
    ctx: CaseContext,
    options: RunOptions,
    *,
    pool: DaemonPool | None,
    finished: Finished,
    hurry: Callable[[], None] | None = None,
    count: int | None = None,
) -> None:
    """Play ``plans`` on the run's ``concurrency`` workers sharing one iterator of them: each
    case driven on ``pool``'s daemon threads (None: awaited on the loop), cancelled after
    the run's ``timeout``, then handed to ``finished`` while the worker plays its next (it
    waits for its oldest hand-over once :data:`AHEAD` are not done, calling ``hurry`` first:
    the writer's cue to commit now). The first worker's error stops them all and is raised.
    ``count``: the number of plans when ``plans`` is made as it is read."""
    if count is None:
        plans = list(plans)
        count = len(plans)
    source = _Plans(plans, hurry)
    concurrency, timeout = options["concurrency"], options["timeout"]

    async def worker() -> None:
        handed: deque[ConcurrentFuture[None]] = deque()  # its cases being handed over
        try:
            for plan in source:
                core = run_case(ctx, plan)
                running = adrive(core) if pool is None else pool.submit(partial(drive, core))
                try:
                    result = await asyncio.wait_for(running, timeout)
                except TimeoutError:
                    result = timed_out(ctx, plan, cast(float, timeout))
                while (oldest := source.due(handed)) is not None:
                    await asyncio.wrap_future(oldest)
                handed.append(finished(plan, result))
        finally:
            for handing in handed:  # also when the run is stopped: what finished is kept
                await asyncio.wrap_future(source.nudge(handing))

    async def thread_worker(pool: DaemonPool) -> None:
        await pool.submit(partial(_cases_on_this_thread, source, ctx, finished))

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, count)):
                if pool is not None and timeout is None:
                    group.create_task(thread_worker(pool))
                else:
                    group.create_task(worker())
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    finally:
        source.stop()  # a worker on a daemon thread takes no new case once the run stops


def _cases_on_this_thread(source: _Plans, ctx: CaseContext, finished: Finished) -> None:
    """A blocking worker with no timeout to keep: its cases follow one another on this daemon
    thread, the event loop not between them, handed over as :func:`play_cases`' own workers
    do. Once the run stops, a case that finishes is dropped, as a cancelled one is, and
    nothing more is waited for."""
    handed: deque[ConcurrentFuture[None]] = deque()
    for plan in source:
        result = contextvars.copy_context().run(drive, run_case(ctx, plan))
        while (oldest := source.due(handed)) is not None:
            if not source.wait(oldest):
                return
        handing = source.hand_over(finished, plan, result)
        if handing is None:
            return
        handed.append(handing)
    for handing in handed:
        if not source.wait(handing):
            return


class _Plans(Iterator[CasePlan]):
    """A run's plans, shared by its workers until they are taken or :meth:`stop` is called."""

    def __init__(self, plans: Iterable[CasePlan], hurry: Callable[[], None] | None) -> None:
        self._plans = iter(plans)
        self._hurry = hurry
        self._lock = threading.Lock()
        self._stopped = False
        self._waiting: set[threading.Event] = set()

    def nudge(self, handing: ConcurrentFuture[None]) -> ConcurrentFuture[None]:
        """``handing``, about to be waited for: the writer is hurried when it is not done."""
        if self._hurry is not None and not handing.done():
            self._hurry()
        return handing

    def due(self, handed: deque[ConcurrentFuture[None]]) -> ConcurrentFuture[None] | None:
        """The oldest of ``handed`` to wait for before another hand-over (one done, whose
        error is raised there, or the oldest of :data:`AHEAD`), nudged; None: go on."""
        if handed and (handed[0].done() or len(handed) >= AHEAD):
            return self.nudge(handed.popleft())
        return None

    def __next__(self) -> CasePlan:
        with self._lock:
            if self._stopped:
                raise StopIteration
            return next(self._plans)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            for waiting in self._waiting:
                waiting.set()

    def hand_over(
        self, finished: Finished, plan: CasePlan, result: CaseResult
    ) -> ConcurrentFuture[None] | None:
        """``finished(plan, result)`` from a worker's thread; None once the run has stopped."""
        with self._lock:
            return None if self._stopped else finished(plan, result)

    def wait(self, handing: ConcurrentFuture[None]) -> bool:
        """Block until ``handing`` is done (its error raised) or the run stops; whether it is."""
        if handing.done():  # most are by the time a worker looks (a hand-over gives None)
            return handing.result() is None
        woken = threading.Event()
        self.nudge(handing).add_done_callback(lambda _: woken.set())
        with self._lock:
            if self._stopped:
                woken.set()
            self._waiting.add(woken)
        woken.wait()
        with self._lock:
            self._waiting.discard(woken)
        if not handing.done():
            return False
        handing.result()
        return True


# --------------------------------------------------------------------------- targets


class CaseTargets:
    """Resolve each case's target; every reference is imported (and checked) up front.

    ``saver`` may be None to check the references only (before anything is opened): such
    targets describe the run but play no case."""

    def __init__(self, explicit: Any, dataset: Dataset, saver: Saver | None) -> None:
        self._explicit = explicit
        self._dataset = dataset
        self._saver = cast(Saver, saver)  # None only for a check: for_case is not called
        self._objects: dict[str, Any] = {}
        self._bound: dict[int, Graph] = {}
        self._lock = threading.Lock()
        server = as_server_target(explicit)  # a ServerTarget, or a RemoteGraph made one
        self._server = None if server is None else server.for_run()
        self._server_graph = None if self._server is None else self._server.player_graph()
        if self._server is not None:
            return  # checked by ready(), which the runner drives before any case
        if isinstance(explicit, str):  # a typo fails here, before any case runs
            self._objects[explicit] = import_reference(explicit, what="target")
            return
        if explicit is not None:  # every case plays on it
            return
        for case in dataset.cases:
            self._object(case)  # a bad or missing reference fails before any case runs

    def ready(self) -> Core[None]:
        """Check what the run plays on before any case: that the server answers and serves
        the assistant, for a server target (local references were checked when made).

        Raises:
            ServerError: the server could not be reached.
            AssistantNotFoundError: it serves no such assistant.
        """
        if self._server is not None:
            yield from self._server.checking()

    def for_case(self, case: Case) -> Graph:
        """The graph ``case`` is played on, bound to the run's checkpointer (or the
        server's assistant)."""
        if self._server_graph is not None:
            return cast(Graph, self._server_graph)
        target = self._object(case)
        if isinstance(target, Pregel):
            with self._lock:
                graph = self._bound.get(id(target))
                if graph is None:
                    graph = self._bound[id(target)] = resolve_target(target, self._saver)
            return graph
        return resolve_target(target, self._saver)

    def thread_for(self, thread_id: str, *, resuming: bool) -> Core[tuple[str, bool]]:
        """The thread to play the run's ``thread_id`` on, and whether the player goes on with
        what a killed run left there. Locally it is ``thread_id``, gone on with when the run
        resumes; on a server it is a new thread (a UUID derived from ``thread_id``), the one
        a killed run left replaced: the server's history does not carry the player's marks
        of finished turns, so a case in flight is played again from its start."""
        if self._server is None:
            return thread_id, resuming
        server_id = yield from self._server.fresh_thread(thread_id, replace_old=resuming)
        return server_id, False

    def extraction(self, graph: Graph, config: RunnableConfig) -> Core[ThreadTrajectory]:
        """Read back the thread ``config`` names, which ``graph`` played (from the server
        for a server target); its warnings are left in the trajectory, for the case to
        sort (:func:`~lg_eval.experiments._case.case_notes`)."""
        if self._server is not None:
            thread_id = str(config["configurable"]["thread_id"])
            return self._server.extraction(thread_id, warn=False)
        return extraction(graph, config, warn=False)

    def describe(self) -> str:
        """How the run names its target (for the run record)."""
        if self._server is not None:
            return self._server.describe()
        if self._explicit is not None:
            return _describe(self._explicit)
        names = sorted({self._dataset.target_for(case) or "" for case in self._dataset.cases})
        return ", ".join(names) if names else (self._dataset.graph or "")

    def _object(self, case: Case) -> Any:
        if isinstance(self._explicit, str):
            return self._objects[self._explicit]
        if self._explicit is not None:
            return self._explicit
        reference = self._dataset.target_for(case)
        if reference is None:
            raise InvalidOptionError(
                f"Case {case.id!r} has no target: pass target= (a compiled graph, a builder, "
                f"a factory or 'module:attr'), or name the graph in dataset "
                f"{self._dataset.name!r} (graph: module:attr) or in the case."
            )
        with self._lock:
            target = self._objects.get(reference)
            if target is None:
                target = self._objects[reference] = import_reference(
                    reference, what="target", allow_code=self._dataset.allows_code
                )
        return target


def _describe(target: Any) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None)
    if module and name:
        return f"{module}:{name}"
    graph_name = getattr(target, "name", None)
    return f"{type(target).__name__}({graph_name!r})" if graph_name else type(target).__name__
