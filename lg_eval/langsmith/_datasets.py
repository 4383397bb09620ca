"""Push lg_eval datasets to LangSmith and pull them back, through ``langsmith.Client``.

One case is one example:

* ``inputs``: ``{"turns": [...]}`` in the dataset format, with ``"user"`` for a case with
  a simulated user (what :func:`~lg_eval.langsmith.graph_target` plays);
* ``outputs``: the case's expectations (``trajectory``, ``tool_calls``,
  ``output``, ``max_steps``; the parts it sets), which lg_eval evaluators read
  as ``reference_outputs``;
* ``metadata``: ``case_id``, ``tags`` and under ``lg_eval`` the rest of the case
  (description, evaluators, graph, its own metadata).

The dataset's default ``graph``, ``evaluators`` and description go in the
LangSmith dataset's metadata. Example ids are derived from the dataset and case
ids (UUID 5), so pushing again updates changed examples and creates new ones
instead of duplicating. Examples of cases no longer in the file are left alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from langsmith import Client
from langsmith.utils import LangSmithNotFoundError
from pydantic import BaseModel, SkipValidation, ValidationError

from lg_eval._arguments import validated
from lg_eval.datasets import Case, Dataset
from lg_eval.langsmith._errors import LangSmithDatasetError

NAMESPACE = uuid.UUID("5f0c3f8e-9d1b-4d59-9a57-6c1e0b3c2a10")
"""The UUID-5 namespace of lg_eval example ids."""

_CASE_KEYS = ("description", "graph", "evaluators", "metadata")


class PushResult(BaseModel):
    """What :func:`push_dataset` did."""

    dataset_id: str
    created: list[str]
    updated: list[str]
    unchanged: list[str]


def example_id(dataset_id: str | uuid.UUID, case_id: str) -> uuid.UUID:
    """The example id of ``case_id`` in the LangSmith dataset ``dataset_id`` (stable)."""
    return uuid.uuid5(NAMESPACE, f"{dataset_id}/{case_id}")


@validated
def case_to_example(case: Case) -> dict[str, Any]:
    """``{"inputs", "outputs", "metadata"}`` of the example holding ``case``."""
    return _example(case)


def _example(case: Case) -> dict[str, Any]:
    data = case.model_dump(mode="json", by_alias=True)
    expected = {k: v for k, v in (data.get("expected") or {}).items() if v is not None}
    rest = {k: data[k] for k in _CASE_KEYS if data.get(k) not in (None, {}, [])}
    metadata: dict[str, Any] = {"case_id": case.id, "tags": list(case.tags)}
    if rest:
        metadata["lg_eval"] = rest
    inputs = {"turns": data["turns"]}
    if data.get("user") is not None:
        inputs["user"] = data["user"]
    return {"inputs": inputs, "outputs": expected, "metadata": metadata}


def case_from_example(
    inputs: Mapping[str, Any] | None,
    outputs: Mapping[str, Any] | None,
    metadata: Mapping[str, Any] | None,
    *,
    fallback_id: str,
) -> Case:
    """The case an example holds (the reverse of :func:`case_to_example`)."""
    metadata = dict(metadata or {})
    case_id = str(metadata.get("case_id") or fallback_id)
    data: dict[str, Any] = {
        "id": case_id,
        "tags": list(metadata.get("tags") or []),
        "turns": (inputs or {}).get("turns") or [],
        "user": (inputs or {}).get("user"),
        "expected": dict(outputs or {}),
        **dict(metadata.get("lg_eval") or {}),
    }
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise LangSmithDatasetError(
            f"Example {fallback_id} (case {case_id!r}) is not an lg_eval case: {where}: "
            f"{first['msg']}. Its inputs need 'turns' in the dataset format (or a simulated "
            "'user')."
        ) from None


def _client(client: Client | None) -> Client:
    if client is not None:
        return client
    from lg_eval.langsmith._experiment import require_api_key

    require_api_key("a LangSmith dataset")
    return Client()


@validated
def push_dataset(
    dataset: Dataset, name: str | None = None, client: SkipValidation[Client | None] = None
) -> PushResult:
    """Create or update the LangSmith dataset ``name`` (default ``dataset.name``) from ``dataset``.

    Idempotent: each case has a stable example id, so a second push creates
    nothing (changed cases are updated). Without ``client`` a ``langsmith.Client()``
    is made, which needs ``LANGSMITH_API_KEY``.
    """
    client = _client(client)
    name = name or dataset.name
    try:
        remote = client.read_dataset(dataset_name=name)
    except LangSmithNotFoundError:
        defaults = dataset.model_dump(mode="json", include={"graph", "evaluators"})
        remote = client.create_dataset(
            name, description=dataset.description, metadata={"lg_eval": defaults}
        )
    existing = {str(e.id): e for e in client.list_examples(dataset_id=remote.id)}
    created: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    result = PushResult(dataset_id=str(remote.id), created=[], updated=[], unchanged=[])
    for index, case in enumerate(dataset.cases):
        row = _example(case)
        row["metadata"]["index"] = index
        row_id = str(example_id(remote.id, case.id))
        found = existing.get(row_id)
        if found is None:
            created.append({"id": row_id, **_create(row)})
            result.created.append(case.id)
        elif (found.inputs, found.outputs or {}, found.metadata or {}) != (
            row["inputs"],
            row["outputs"],
            row["metadata"],
        ):
            updates.append({"id": row_id, **row})
            result.updated.append(case.id)
        else:
            result.unchanged.append(case.id)
    if created:
        client.create_examples(dataset_id=remote.id, examples=created)
    if updates:
        client.update_examples(dataset_id=remote.id, updates=updates)
    return result


def _create(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputs": row["inputs"],
        "reference_outputs": row["outputs"],
        "metadata": row["metadata"],
    }


def _position(example: Any) -> tuple[int, str]:
    metadata = example.metadata or {}
    index = metadata.get("index")
    return (index if isinstance(index, int) else 1 << 30, str(metadata.get("case_id", "")))


def pull_dataset(name: str, client: Client | None = None) -> Dataset:
    """The LangSmith dataset ``name`` as an lg_eval :class:`~lg_eval.datasets.Dataset`.

    Cases come in the order of the last push. The result has
    ``allows_code=False``: it came from remote data, so its ``module:attr``
    references (graph, ``resume_fn``, evaluators) are not imported unless the
    caller says so.
    """
    client = _client(client)
    remote = client.read_dataset(dataset_name=name)
    examples = list(client.list_examples(dataset_id=remote.id))
    examples.sort(key=_position)
    cases = [
        case_from_example(e.inputs, e.outputs, e.metadata, fallback_id=str(e.id)) for e in examples
    ]
    defaults = (remote.metadata or {}).get("lg_eval") or {}
    try:
        return Dataset(
            name=name,
            description=remote.description,
            graph=defaults.get("graph"),
            evaluators=defaults.get("evaluators") or [],
            cases=cases,
            source=None,
            allows_code=False,
        )
    except ValidationError as exc:
        raise LangSmithDatasetError(
            f"LangSmith dataset {name!r} is not an lg_eval dataset: {exc}"
        ) from None
