"""Labels harvested from a real ``langgraph dev`` serving the travel agent: each booking a
person approved, edited or rejected through the server's runs API is one label, the same
as the decisions sent; read with ``harvest_server_labels`` and ``lg-eval labels harvest
--server``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.experiments import open_store
from lg_eval.labels import ACTION_KEY, harvest_server_labels, load_labels
from tests import travel
from tests.server.conftest import launched
from tests.server.travel_served import GATES

SERVED = str(Path(__file__).with_name("travel_served.py"))
REQUEST = {"messages": [{"role": "user", "content": travel.REQUEST}]}
EDITED = {"name": "book_flight", "args": {**travel.MORNING, "seat": "aisle"}}
DECISIONS: dict[str, dict[str, Any]] = {
    "approve": {"type": "approve"},
    "edit": {"type": "edit", "edited_action": EDITED},
    "reject": {"type": "reject", "message": "Not that early."},
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """``langgraph dev`` serving the travel agent, and one finished thread per decision."""
    gates = tmp_path_factory.mktemp("gates")
    home = tmp_path_factory.mktemp("travel-server")
    options = {"graphs": {"travel": f"{SERVED}:graph"}, "env": {GATES: str(gates)}}
    for url in launched(home, " (travel)", **options):
        client = get_sync_client(url=url)
        threads = {}
        for decision, answer in DECISIONS.items():
            thread = threads[decision] = str(uuid.uuid4())
            client.runs.wait(thread, "travel", input=REQUEST, if_not_exists="create")
            client.runs.wait(thread, "travel", command={"resume": {"decisions": [answer]}})
        yield url, threads


def test_each_decision_made_through_the_server_is_a_label(
    served: tuple[str, dict[str, str]],
) -> None:
    url, threads = served
    found = harvest_server_labels(url, list(threads.values()))
    by_thread = {label.thread_id: label for label in found}
    assert len(found) == 3
    for decision, thread in threads.items():
        label = by_thread[thread]
        assert (label.key, label.turn, label.item, label.source) == (
            ACTION_KEY, 1, "c-book", "interrupt"
        )  # fmt: skip
        assert label.verdict is (decision == "approve")
        assert label.metadata is not None
        assert label.metadata["decision"] == decision
        assert label.metadata["call"] == {"name": "book_flight", "args": travel.MORNING}
        assert label.metadata["executed"] is (decision != "reject")
    assert by_thread[threads["edit"]].metadata["edited_action"] == EDITED  # type: ignore[index]
    assert by_thread[threads["reject"]].note == "Not that early."


def test_labels_harvest_reads_a_servers_threads_into_the_store(
    served: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, threads = served
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    args = ["labels", "harvest", "--server", url, "--store", store]
    for thread in threads.values():
        args += ["--thread", thread]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "3 labels stored (interrupt)\n"
    with open_store(store) as opened:
        stored = load_labels(opened)
    assert sorted((label.thread_id, label.verdict) for label in stored) == sorted(
        (thread, decision == "approve") for decision, thread in threads.items()
    )
