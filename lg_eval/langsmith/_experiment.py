"""``run_langsmith_experiment``: what ``lg-eval run DATASET --langsmith [NAME]`` calls."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from langsmith import Client

from lg_eval.datasets import Dataset
from lg_eval.langsmith._datasets import push_dataset
from lg_eval.langsmith._errors import MissingAPIKeyError, MissingTargetError
from lg_eval.langsmith._summary import mean_score, pass_rate
from lg_eval.langsmith._target import Checkpointer, graph_target

API_KEY_VARIABLES = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")


def require_api_key(what: str = "a LangSmith experiment") -> None:
    """Raise :class:`MissingAPIKeyError` unless a LangSmith API key is in the environment."""
    if not any((os.environ.get(name) or "").strip() for name in API_KEY_VARIABLES):
        raise MissingAPIKeyError(
            f"{what} needs a LangSmith API key and LANGSMITH_API_KEY is not set. Set it (and "
            "LANGSMITH_ENDPOINT for a self-hosted LangSmith), or run without --langsmith to "
            "evaluate offline."
        )


def run_langsmith_experiment(
    dataset: Dataset,
    target: Any = None,
    *,
    name: str | None = None,
    client: Client | None = None,
    evaluators: Sequence[Any] = (),
    checkpointer: Checkpointer = None,
    max_concurrency: int | None = 0,
    summary: bool = True,
) -> Any:
    """Push ``dataset`` to LangSmith (idempotently) and run an uploaded experiment on it.

    ``target`` defaults to ``dataset.graph`` (imported only if the dataset allows
    code); ``name`` is the LangSmith dataset name (default ``dataset.name``);
    ``evaluators`` are lg_eval evaluators (sync, unwrapped). With ``summary``,
    pass-rate and mean-score summary evaluators over the same evaluators are
    added. Returns ``langsmith.evaluate``'s results. Without ``client``, needs
    ``LANGSMITH_API_KEY`` (:class:`MissingAPIKeyError` otherwise).
    """
    from langsmith import evaluate

    if client is None:
        require_api_key()
        client = Client()
    chosen = target if target is not None else dataset.graph
    if chosen is None:
        raise MissingTargetError(_no_target(dataset.name, remote=False))
    if isinstance(chosen, str) and target is None and not dataset.allows_code:
        raise MissingTargetError(_no_target(dataset.name, remote=True))
    pushed = push_dataset(dataset, name, client=client)
    summaries: list[Any] = (
        [pass_rate(*evaluators), mean_score(*evaluators)] if summary and evaluators else []
    )
    return evaluate(
        graph_target(chosen, checkpointer=checkpointer, allow_code=dataset.allows_code),
        data=client.list_examples(dataset_id=pushed.dataset_id),
        evaluators=list(evaluators),
        summary_evaluators=summaries,
        client=client,
        max_concurrency=max_concurrency,
        metadata={"lg_eval_dataset": dataset.name},
    )


def _no_target(dataset: str, *, remote: bool) -> str:
    reason = (
        "its graph reference came from remote data and is not imported"
        if remote
        else "it names no graph"
    )
    return (
        f"Dataset {dataset!r} has no target to run: {reason}. Pass target= (a compiled "
        "graph, builder, factory or 'module:attr')."
    )
