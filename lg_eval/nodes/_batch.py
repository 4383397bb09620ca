"""Run the evaluation graph over many cases, a bounded number at a time.

Each case gets its own evaluation thread (``<prefix>:<graph>:<thread id>``
for targets, ``<prefix>:<thread id>`` for extracted thread trajectories,
``<prefix>:<index>`` otherwise), so a batch is resumable: calling it again
with the same cases skips finished evaluations (unless ``rerun=True``),
goes on with ones that crashed from their last checkpoint, and leaves ones
waiting for a reviewer alone. One failing case never stops the others: it is
reported with ``status="error"``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot
from pydantic import BaseModel, Field, SkipValidation

from lg_eval._arguments import Count, Flag, validated
from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval._feedback import describe_error
from lg_eval._offline import offline
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidOptionError, MissingCheckpointerError
from lg_eval.nodes._evaluation_state import EvalCase, EvaluationResult

Status = Literal["done", "review", "error"]


class BatchItem(BaseModel):
    """How one case of a batch ended."""

    thread_id: str = Field(description="The evaluation thread (resume reviews with it).")
    status: Status
    result: EvaluationResult | None = Field(
        default=None, description="The result (also set while a review is pending)."
    )
    review: Any = Field(default=None, description="The pending review request (status 'review').")
    error: str | None = None

    def config(self) -> RunnableConfig:
        """The config addressing the evaluation thread, e.g. to resume a review."""
        return {"configurable": {"thread_id": self.thread_id}}


@validated
def batch_evaluate(
    graph: Pregel[Any, Any, Any, Any],
    cases: Sequence[EvalCase | Mapping[str, Any]],
    *,
    max_concurrency: Count = 4,
    thread_prefix: str = "eval",
    config: SkipValidation[RunnableConfig | None] = None,
    rerun: Flag = False,
    langsmith: Flag = False,
) -> list[BatchItem]:
    """Evaluate ``cases`` with the evaluation ``graph``, at most ``max_concurrency`` at once.

    ``config`` is merged into every run (e.g. ``{"configurable":
    {"lg_eval_graphs": {...}}}``). Items come back in the order of ``cases``.
    Nothing is traced to LangSmith unless ``langsmith=True``, whatever the
    environment says (see :func:`lg_eval.langsmith.offline`).
    """
    jobs = _jobs(graph, cases, max_concurrency, thread_prefix, config, rerun)
    with _tracing(langsmith), ThreadPoolExecutor(max_workers=max_concurrency) as pool:
        return list(pool.map(drive, jobs))


@validated
async def abatch_evaluate(
    graph: Pregel[Any, Any, Any, Any],
    cases: Sequence[EvalCase | Mapping[str, Any]],
    *,
    max_concurrency: Count = 4,
    thread_prefix: str = "eval",
    config: SkipValidation[RunnableConfig | None] = None,
    rerun: Flag = False,
    langsmith: Flag = False,
) -> list[BatchItem]:
    """Async twin of :func:`batch_evaluate` (``ainvoke``; async checkpointers)."""
    jobs = _jobs(graph, cases, max_concurrency, thread_prefix, config, rerun)
    gate = asyncio.Semaphore(max_concurrency)

    async def one(job: Core[BatchItem]) -> BatchItem:
        async with gate:
            return await adrive(job)

    with _tracing(langsmith):
        return list(await asyncio.gather(*(one(job) for job in jobs)))


def _tracing(langsmith: bool) -> AbstractContextManager[Any]:
    """Offline unless the caller opted in to LangSmith."""
    return nullcontext() if langsmith else offline()


def _jobs(
    graph: Pregel[Any, Any, Any, Any],
    cases: Sequence[EvalCase | Mapping[str, Any]],
    max_concurrency: int,
    prefix: str,
    config: RunnableConfig | None,
    rerun: bool,
) -> list[Core[BatchItem]]:
    if not isinstance(graph.checkpointer, BaseCheckpointSaver):
        raise MissingCheckpointerError(
            "A batch keeps one evaluation thread per case, so the evaluation graph needs a "
            "checkpointer: create_evaluation_graph(..., checkpointer=InMemorySaver()) or a "
            "SqliteSaver to make the batch resumable across processes."
        )
    parsed = [c if isinstance(c, EvalCase) else EvalCase.model_validate(c) for c in cases]
    ids = [thread_id_for(case, index, prefix) for index, case in enumerate(parsed)]
    if len(set(ids)) != len(ids):
        raise InvalidOptionError(
            "Two cases evaluate the same thread, so they would share one evaluation thread; "
            "remove the duplicate cases."
        )
    return [
        evaluate_case(graph, case, _with_thread(config, thread_id), rerun)
        for case, thread_id in zip(parsed, ids, strict=True)
    ]


def thread_id_for(case: EvalCase, index: int, prefix: str) -> str:
    """The evaluation thread id of a case (stable across calls, so batches resume)."""
    if case.target is not None:
        return f"{prefix}:{case.target.graph}:{case.target.thread_id}"
    if isinstance(case.trajectory, ThreadTrajectory):
        return f"{prefix}:{case.trajectory.thread_id}"
    if isinstance(case.trajectory, Mapping) and isinstance(case.trajectory.get("thread_id"), str):
        return f"{prefix}:{case.trajectory['thread_id']}"
    return f"{prefix}:{index}"


def evaluate_case(
    graph: Pregel[Any, Any, Any, Any], case: EvalCase, config: RunnableConfig, rerun: bool
) -> Core[BatchItem]:
    """One case: start, resume after a crash, or report what is already there."""
    thread_id = config["configurable"]["thread_id"]
    snapshot = yield _state(graph, config)
    pending = snapshot is not None and bool(snapshot.next)
    waiting = pending and bool(snapshot.interrupts)
    finished = snapshot is not None and not pending and bool(snapshot.values.get("result"))
    if not waiting and (rerun or not finished):
        payload = None if pending else case.as_input()
        try:
            yield Effect(
                lambda: graph.invoke(payload, config), lambda: graph.ainvoke(payload, config)
            )
        except Exception as exc:
            error = describe_error(exc)
            return BatchItem(thread_id=thread_id, status="error", error=error)
        snapshot = yield _state(graph, config)
    return _item(thread_id, snapshot)


def _state(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> Effect[StateSnapshot | None]:
    def known(snapshot: StateSnapshot) -> StateSnapshot | None:
        return snapshot if snapshot.created_at is not None else None

    async def aget() -> StateSnapshot | None:
        return known(await graph.aget_state(config))

    return Effect(lambda: known(graph.get_state(config)), aget)


def _item(thread_id: str, snapshot: StateSnapshot | None) -> BatchItem:
    values = snapshot.values if snapshot is not None else {}
    result = values.get("result")
    parsed = EvaluationResult.model_validate(result) if result else None
    if snapshot is not None and snapshot.interrupts:
        return BatchItem(
            thread_id=thread_id,
            status="review",
            result=parsed,
            review=snapshot.interrupts[0].value,
        )
    if snapshot is None or snapshot.next or parsed is None:
        return BatchItem(
            thread_id=thread_id, status="error", error="The evaluation did not finish."
        )
    return BatchItem(thread_id=thread_id, status="done", result=parsed)


def _with_thread(config: RunnableConfig | None, thread_id: str) -> RunnableConfig:
    base: RunnableConfig = config or {}
    configurable = {**(base.get("configurable") or {}), "thread_id": thread_id}
    return {**base, "configurable": configurable}
