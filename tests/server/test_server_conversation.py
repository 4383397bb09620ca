"""Simulated conversations against a deployed assistant: the one turn player drives the
support agent on a real ``langgraph dev`` (``--server``'s target) exactly as it drives the
graph locally, the simulated user reading the agent's replies from the server's state and
the reviewer answering the approval in the middle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from lg_eval.datasets import dataset_from_dict
from lg_eval.experiments import ExperimentRun, run_experiment
from lg_eval.play import SimulatedReviewer
from lg_eval.server import server_target
from tests.judges.fake_judge import ScriptedJudge
from tests.play import support
from tests.server.conftest import launched

SUPPORT = support.__file__


@pytest.fixture(scope="module")
def support_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` serving the support agent (``support``) and its approving twin."""
    graphs = {"support": f"{SUPPORT}:served", "approving": f"{SUPPORT}:served_approving"}
    yield from launched(tmp_path_factory.mktemp("support-server"), " (support)", graphs=graphs)


USER = {
    "persona": "a customer whose blender arrived broken",
    "goal": "a refund for order 42",
    "model": "tests.play.support:customer_model",
}


def run(target: Any, graph: str, store: Path, **user: Any) -> ExperimentRun:
    data = dataset_from_dict(
        {"name": "support", "graph": graph, "cases": [{"id": "refund", "user": {**USER, **user}}]},
        allows_code=True,
    )
    reviewer = SimulatedReviewer(
        ScriptedJudge.of(AIMessage("yes"), repeat_last=True), persona="a lead"
    )
    return run_experiment(
        target, data, checkpointer="memory://", store=store, judge_cache=False, reviewer=reviewer
    )


def seen(run: ExperimentRun) -> list[Any]:
    """What must be equal on the server and locally (all but ids, times and places)."""
    return [
        (
            r.status,
            r.trajectory,
            [
                (t.index, t.kind, t.by, t.sent, t.reply, [a["value"] for a in t.asked])
                for t in r.turns
            ],
            None if r.simulation is None else r.simulation.model_dump(exclude={"latency_s"}),
            r.tokens,
        )
        for r in run.results
    ]


@pytest.mark.parametrize(
    ("assistant", "graph", "user"),
    [
        ("support", "tests.play.support:build", {}),
        ("approving", "tests.play.support:approving", {"interrupts": {"approve": "reviewer"}}),
    ],
)
def test_a_simulated_conversation_plays_the_same_on_a_deployed_assistant(
    support_url: str, tmp_path: Path, assistant: str, graph: str, user: dict[str, Any]
) -> None:
    local = run(None, graph, tmp_path / "local.sqlite", **user)
    remote = run(
        server_target(support_url, assistant, graph=graph),
        graph,
        tmp_path / "remote.sqlite",
        **user,
    )
    assert seen(remote) == seen(local)
    (result,) = remote.results
    assert [t.by for t in result.turns] == ["user"] * 3 + (["reviewer"] if user else [])
    assert result.turns[-1].reply == support.DONE.format(order="42")
    assert result.simulation is not None and result.simulation.stop == "user"
