"""push_dataset / pull_dataset against the dataset endpoints served on loopback."""

from __future__ import annotations

import pytest
from langsmith import Client

from lg_eval.datasets import Dataset
from lg_eval.langsmith import (
    MissingAPIKeyError,
    OfflineError,
    offline_client,
    pull_dataset,
    push_dataset,
)
from tests.langsmith.helpers import golden
from tests.langsmith.servers import DatasetServer


def loopback_client(server: DatasetServer) -> Client:
    return Client(api_url=server.url, api_key="test-key", auto_batch_tracing=False)


def test_push_push_pull_round_trip(dataset_server: DatasetServer) -> None:
    client = loopback_client(dataset_server)
    source = golden("weather")

    first = push_dataset(source, "weather-golden", client=client)
    assert first.created == source.case_ids() and first.updated == first.unchanged == []
    again = push_dataset(source, "weather-golden", client=client)
    assert again.created == again.updated == [] and again.unchanged == source.case_ids()
    assert len(dataset_server.datasets) == 1
    assert len(dataset_server.examples) == len(source.cases)

    pulled = pull_dataset("weather-golden", client=client)
    assert pulled.allows_code is False
    assert all(not case.allows_code for case in pulled.cases)
    assert pulled.model_dump() == source.model_dump()


def test_examples_carry_turns_expectations_and_metadata(dataset_server: DatasetServer) -> None:
    source = golden("weather")
    push_dataset(source, client=loopback_client(dataset_server))
    example = next(
        e for e in dataset_server.examples.values() if e["metadata"]["case_id"] == "sunny-sf"
    )
    assert example["inputs"] == {
        "turns": [
            {"input": {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}},
            {"resume": "It's sunny and 75 degrees"},
        ]
    }
    assert example["outputs"]["tool_calls"] == [{"name": "get_weather", "args": {"city": "sf"}}]
    assert example["outputs"]["trajectory"]["steps"] == [
        ["__start__", "agent", "tools", "__interrupt__"],
        ["agent"],
    ]
    assert example["metadata"]["tags"] == ["hitl"]


def test_a_changed_case_is_updated_not_duplicated(dataset_server: DatasetServer) -> None:
    client = loopback_client(dataset_server)
    source = golden("weather")
    push_dataset(source, "w", client=client)
    data = source.model_dump(mode="json", by_alias=True)
    data["cases"][0]["tags"] = ["hitl", "changed"]
    changed = Dataset.model_validate(data)
    result = push_dataset(changed, "w", client=client)
    assert result.updated == ["sunny-sf"] and result.created == []
    assert len(dataset_server.examples) == len(source.cases)
    assert pull_dataset("w", client=client).cases[0].tags == ["hitl", "changed"]


def test_without_a_client_or_key_the_error_is_typed() -> None:
    with pytest.raises(MissingAPIKeyError, match="LANGSMITH_API_KEY is not set"):
        push_dataset(golden("weather"))


def test_the_offline_client_refuses_dataset_calls_without_sending() -> None:
    with pytest.raises(OfflineError, match="nothing was sent"):
        pull_dataset("weather-golden", client=offline_client())
