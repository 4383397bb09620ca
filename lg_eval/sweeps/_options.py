"""The options of a sweep, spelled once: :func:`~lg_eval.sweeps.sweep_threads` and
:class:`~lg_eval.sweeps.Watch` take them as keywords and check them at their boundary (one
:class:`~lg_eval.errors.InvalidOptionError` naming the option), so the sweep itself reads
them as they are."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    SkipValidation,
    with_config,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from lg_eval._arguments import Count, Flag, ModelLike, Share, Size
from lg_eval._feedback import Thresholds
from lg_eval.executors import Executor
from lg_eval.experiments import RedactOption, ResultStore, make_redactor
from lg_eval.judges import RateLimiter, RateLimits
from lg_eval.server import ServerConnection, ThreadStatus
from lg_eval.sweeps._listing import parse_time

SweepProgress = Callable[[int, int, int], None]
"""``progress(scored, passed, failed)`` after each partition is stored."""

TimeOption = str | datetime | timedelta | None
"""A datetime, a timedelta before now, ``"24h"`` / ``"30m"`` / ``"7d"``, or ISO 8601."""


def _listed(value: object) -> object:
    """One evaluator alone stands for a list of one (a name is not a list of its letters)."""
    return [value] if isinstance(value, str | Mapping) else value


def hourly_budget(budget: object) -> RateLimiter | None:
    """``judge_budget`` as a limiter: at most that many judge requests in any rolling hour
    (a limiter given is kept as it is, with the requests it already counted)."""
    if budget is None or isinstance(budget, RateLimiter):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise PydanticCustomError(
            "judge_budget", "use an integer >= 1 (judge requests an hour) or a RateLimiter"
        )
    return RateLimiter(RateLimits(requests_per_minute=budget, window_seconds=3600.0))


@with_config(ConfigDict(arbitrary_types_allowed=True, extra="forbid"))
class SweepOptions(TypedDict, total=False):
    """What a sweep reads and how it scores; every key optional.

    server: sweep the threads of a LangGraph Server instead of a checkpointer (a URL, or a
        :class:`~lg_eval.server.ServerConnection` holding its API key and headers).
    assistant_id / status: with ``server``, only the threads of this assistant (a UUID or a
        graph id) / in this status (idle, busy, interrupted, error).
    since / until: the time of a thread's newest checkpoint (a datetime, a timedelta or
        ``"24h"`` before now, ISO 8601).
    metadata: key/values one of the thread's checkpoints carries (on a server: the
        thread's metadata).
    sample: a fraction of the threads, kept by hashing the thread id (the same every run).
    limit: at most this many threads scored.
    evaluators: reference-free evaluators (names, ``module:attr``, objects, or
        ``{"name": ..., "options": {...}}``); one alone stands for a list of one. Default
        ``("redundancy",)``.
    store: the results store (a :class:`~lg_eval.experiments.ResultStore`, a path or a URL).
    executor / ray_address: ``"local"`` (default), ``"ray"`` (then ``graph`` as
        ``"module:attr"`` and ``checkpointer`` as a URL: workers open their own) or an
        executor object.
    name: the sweep's name (its incremental state); default the graph's reference or name.
    run_id: the run to store (the same one again resumes it).
    incremental: score only threads new or changed since the last sweep of ``name``
        (default True).
    thresholds: ``{feedback key or evaluator name: minimum}`` for numeric scores.
    partition_size / page_size: threads per task (50) / threads listed per page (500).
    progress: ``progress(scored, passed, failed)`` after each partition is stored.
    redact: a ``str -> str`` function or regex patterns applied to every string taken from
        a thread before its result is stored.
    judge_limits: the judge provider's limits (:class:`~lg_eval.judges.RateLimits` or its
        dict), held across every worker.
    judge_cache: judge answers cached on the driver's disk (True, the default:
        ``.lg_eval/judge_cache.sqlite``; a path; False).
    judge_budget: at most this many judge requests in any rolling hour (a request that does
        not fit waits), or a :class:`~lg_eval.judges.RateLimiter` holding one budget across
        sweeps (local executor only).
    worst / history: the worst threads kept in the result (20) / the latest sweeps of the
        same name in its trend (10).
    """

    server: SkipValidation[ServerConnection | str | None]
    assistant_id: str | None
    status: ThreadStatus | None
    since: Annotated[TimeOption, PlainValidator(parse_time)]
    until: Annotated[TimeOption, PlainValidator(parse_time)]
    metadata: Mapping[str, Any] | None
    sample: Share | None
    limit: Size | None
    evaluators: Annotated[Sequence[Any], BeforeValidator(_listed), Field(default=("redundancy",))]
    store: SkipValidation[ResultStore | str | Path | None]
    executor: Annotated[SkipValidation[str | Executor | None], Field(default="local")]
    ray_address: str | None
    name: str | None
    run_id: str | None
    incremental: Annotated[Flag, Field(default=True)]
    thresholds: Thresholds | None
    partition_size: Annotated[Count, Field(default=50)]
    page_size: Annotated[Count, Field(default=500)]
    progress: SweepProgress | None
    redact: Annotated[RedactOption, PlainValidator(make_redactor)]
    judge_limits: ModelLike[RateLimits] | None
    judge_cache: Annotated[SkipValidation[bool | str | Path], Field(default=True)]
    judge_budget: Annotated[int | RateLimiter | None, PlainValidator(hourly_budget)]
    worst: Annotated[Size, Field(default=20)]
    history: Annotated[Size, Field(default=10)]
