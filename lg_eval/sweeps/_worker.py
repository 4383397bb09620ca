"""Score one partition of threads: extract each at its listed checkpoint, run the evaluators.

A partition is extracted as one batch (:func:`~lg_eval.extract.extract_threads`: on
Postgres one round trip for the rows of all its threads, not one per thread); a thread
that cannot be extracted becomes that thread's ``error`` result, and the others are scored.

:class:`PartitionScorer` is what an executor runs. It holds names (graph
``module:attr``, checkpointer URL, evaluator registry names) or, for the local
executor only, live objects; a Ray worker opens the checkpointer named by URL once
per process and reuses it for every partition it is given.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from lg_eval._effects import drive
from lg_eval._evaluator import Evaluator
from lg_eval._feedback import describe_error
from lg_eval._heap import paused_gc
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import needs_reference, reference_free_evaluators, resolve_evaluator
from lg_eval.experiments import CaseEvaluator, CaseResult, score_thread
from lg_eval.extract import extract_threads
from lg_eval.extract._thread import Reader
from lg_eval.play import open_checkpointer, resolve_target

Partition = Sequence[tuple[str, str]]
"""``(thread_id, checkpoint_id)`` pairs."""

_OPEN: dict[tuple[str, str], Any] = {}
_OPEN_LOCK = threading.Lock()
_STACK = ExitStack()


def refuse_reference_needers(evaluators: Sequence[Any]) -> None:
    """Refuse, before anything runs, the registry names declared to need a reference: a
    thread in a checkpointer has no expectations, so each would error on every thread. A
    name given with options (``{"name": ..., "options": {...}}``) is let through: its
    options may hold the expectations (``keywords``' ``keywords``, ``step_efficiency``'s
    ``expected``).

    Raises:
        InvalidOptionError: naming them, and the reference-free evaluators to use instead.
    """
    needing = [
        name for name, options in map(_named, evaluators) if not options and needs_reference(name)
    ]
    if needing:
        raise InvalidOptionError(
            f"evaluators: {', '.join(needing)} "
            f"{'needs' if len(needing) == 1 else 'need'} a reference (reference_outputs), "
            "which a swept thread does not have; use a reference-free evaluator: "
            f"{', '.join(reference_free_evaluators())}, or give the expectations as options "
            "({'name': 'keywords', 'options': {'keywords': ['refund']}}; on the command line "
            "--evaluator keywords:keywords=[refund])."
        )


def resolve_evaluators(evaluators: Sequence[Any]) -> list[tuple[str, Evaluator[Any]]]:
    """``(name in results, evaluator)`` for registry names, ``{"name", "options"}`` dicts
    (a registry name or ``module:attr`` factory built with those options, as a dataset
    writes it), ``module:attr`` references, evaluator objects and plain evaluator functions
    (:func:`lg_eval.evaluators.resolve_evaluator`)."""
    resolved = []
    for item in evaluators:
        if isinstance(item, Mapping):
            name, options = _named(item)
            resolved.append(resolve_evaluator(name, options))
        else:
            resolved.append(resolve_evaluator(item))
    return resolved


def case_evaluators(evaluators: Sequence[Any]) -> list[CaseEvaluator]:
    """The evaluators as the scoring step takes them (:func:`resolve_evaluators`), made once
    per partition and used for each of its threads."""
    return [CaseEvaluator(name, evaluator) for name, evaluator in resolve_evaluators(evaluators)]


def _named(item: Any) -> tuple[Any, Mapping[str, Any] | None]:
    """``(name, options)`` of an evaluator item: a dict's, else the item with no options."""
    if not isinstance(item, Mapping):
        return item, None
    if set(item) - {"name", "options"} or not isinstance(item.get("name"), str):
        raise InvalidOptionError(
            f"evaluators: {dict(item)!r:.120} is no evaluator; a dict is "
            "{'name': <registry name or module:attr>, 'options': {...}}."
        )
    options = item.get("options") or {}
    if not isinstance(options, Mapping):
        raise InvalidOptionError(
            f"evaluators: the options of {item['name']!r} are a dict of keyword arguments, "
            f"not {type(options).__name__}."
        )
    return item["name"], options


def _graph_for(graph: str, checkpointer: str) -> Any:
    """The graph named ``graph`` bound to the checkpointer at URL, once per process."""
    key = (graph, checkpointer)
    with _OPEN_LOCK:
        bound = _OPEN.get(key)
        if bound is None:
            saver = _STACK.enter_context(open_checkpointer(checkpointer))
            bound = _OPEN[key] = resolve_target(graph, saver)
        return bound


@dataclass
class PartitionScorer:
    """``scorer(partition) -> [(checkpoint_id, CaseResult)]`` for one sweep run."""

    run_id: str
    graph: Any
    """A compiled graph bound to the checkpointer, or ``module:attr`` with ``checkpointer``."""
    evaluators: Sequence[Any]
    checkpointer: str | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)
    reader: str = "auto"
    services: Any = None
    """The run's shared judge limiter and cache (``.active()`` entered around the partition:
    :func:`lg_eval.experiments.judge_services`), or None."""

    def __call__(self, partition: Partition) -> list[tuple[str, CaseResult]]:
        # the collector waits for the partition: one pass over what it made, not one every
        # few hundred allocations over the trajectories still being read and scored
        with paused_gc(), nullcontext() if self.services is None else self.services.active():
            return self._score_all(partition)

    def _score_all(self, partition: Partition) -> list[tuple[str, CaseResult]]:
        graph = (
            _graph_for(self.graph, self.checkpointer or "")
            if isinstance(self.graph, str)
            else self.graph
        )
        evaluators = case_evaluators(self.evaluators)
        configs: list[RunnableConfig] = [
            {"configurable": {"thread_id": t, "checkpoint_ns": "", "checkpoint_id": c}}
            for t, c in partition
        ]
        started = time.perf_counter()
        extracted = list(
            extract_threads(
                graph,
                configs,
                batch_size=max(1, len(configs)),
                reader=cast(Reader, self.reader),
                return_exceptions=True,
            )
        )
        share = (time.perf_counter() - started) / max(1, len(configs))
        return [
            (c, self.score(evaluators, t, thread, share))
            for (t, c), thread in zip(partition, extracted, strict=True)
        ]

    def score(
        self,
        evaluators: list[CaseEvaluator],
        thread_id: str,
        thread: ThreadTrajectory | Exception,
        extraction_s: float,
    ) -> CaseResult:
        """Score one extracted thread (or record why it could not be extracted);
        ``extraction_s`` is its share of the partition's batch extraction, counted in its
        latency."""
        started = time.perf_counter() - extraction_s
        result = CaseResult(
            run_id=self.run_id, case_id=thread_id, status="error", thread_id=thread_id
        )
        if isinstance(thread, Exception):
            result.error = f"extraction failed: {describe_error(thread)}"
        else:
            drive(score_thread(result, thread, evaluators, thresholds=self.thresholds))
        result.latency_s = time.perf_counter() - started
        result.finished_at = datetime.now(UTC)
        return result
