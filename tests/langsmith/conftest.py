"""Fixtures of the LangSmith tests: a clean environment and the loopback servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.langsmith.servers import DatasetServer, RecordingServer, serving


@pytest.fixture(autouse=True)
def _no_langsmith_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "false")
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def dataset_server() -> Iterator[DatasetServer]:
    with serving(DatasetServer()) as server:
        assert isinstance(server, DatasetServer)
        yield server


@pytest.fixture
def recording_server() -> Iterator[RecordingServer]:
    with serving(RecordingServer()) as server:
        yield server
