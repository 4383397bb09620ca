"""Golden examples as LangSmith ``Example`` objects, for the LangSmith tests."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from langsmith import evaluate
from langsmith.schemas import Example

from lg_eval.datasets import Dataset, load_dataset
from lg_eval.langsmith import case_to_example, graph_target, offline, offline_client

GOLDEN = Path(__file__).parent.parent.parent / "examples" / "golden"


def golden(name: str) -> Dataset:
    return load_dataset(GOLDEN / f"{name}.yaml")


def examples_of(dataset: Dataset, target: str | None = None) -> list[Example]:
    """The dataset's cases as examples (only those played on ``target``, when given)."""
    dataset_id = uuid.uuid5(uuid.NAMESPACE_URL, dataset.name)
    rows: list[Example] = []
    for case in dataset.cases:
        if target is not None and dataset.target_for(case) != target:
            continue
        row: dict[str, Any] = case_to_example(case)
        rows.append(
            Example(
                id=uuid.uuid5(dataset_id, case.id),
                dataset_id=dataset_id,
                inputs=row["inputs"],
                outputs=row["outputs"],
                metadata=row["metadata"],
            )
        )
    return rows


def evaluate_weather(evaluators: list[Any], summary_evaluators: list[Any]) -> tuple[Any, list[Any]]:
    """The weather golden through ``langsmith.evaluate`` offline: the results and their rows."""
    dataset = golden("weather")
    target = graph_target(dataset.graph, checkpointer="memory://", allow_code=True)
    with offline():
        results = evaluate(
            target,
            data=examples_of(dataset),
            evaluators=evaluators,
            summary_evaluators=summary_evaluators,
            upload_results=False,
            client=offline_client(),
            max_concurrency=0,
        )
        return results, list(results)
