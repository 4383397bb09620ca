"""The drop-in judges against agentevals' and openevals' own judges, on scripted models.

Both sides get a scripted chat model giving the same verdict (each in the form its
judge asks for: the peers' structured-output tool, lg_eval's judgment tool); the
drop-in returns the peer's dict exactly, the model's reasoning as ``comment``.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest
from agentevals.graph_trajectory.llm import (
    create_async_graph_trajectory_llm_as_judge as agentevals_async_graph_judge,
)
from agentevals.graph_trajectory.llm import (
    create_graph_trajectory_llm_as_judge as agentevals_graph_judge,
)
from agentevals.trajectory.llm import create_trajectory_llm_as_judge as agentevals_judge
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from openevals.trajectory.llm import (
    create_async_trajectory_llm_as_judge as openevals_async_judge,
)
from openevals.trajectory.llm import create_trajectory_llm_as_judge as openevals_judge

from lg_eval.compat import agentevals, openevals
from lg_eval.errors import JudgeError
from tests.judges.fake_judge import ScriptedJudge, auth_error, verdict

TRAJECTORY = [
    HumanMessage("weather in sf?"),
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "sf"}, "id": "c1"}]),
    ToolMessage("sunny", tool_call_id="c1"),
    AIMessage("It is sunny."),
]
REFERENCE = {"messages": [{"role": "user", "content": "weather in sf?"}]}
GRAPH = {"inputs": [{"__start__": {"q": "hi"}}], "results": [{}], "steps": [["__start__", "a"]]}


def peer_model(**answer: Any) -> ScriptedJudge:
    """A model answering the peers' structured-output request (their tool is named after
    the schema's title, ``score``)."""
    return ScriptedJudge.of(
        AIMessage("", tool_calls=[{"name": "score", "args": answer, "id": "p"}])
    )


def our_model(**answer: Any) -> ScriptedJudge:
    return ScriptedJudge.of(verdict(**answer))


CASES = [
    ({"reasoning": "Sensible.", "score": True}, {}),
    ({"reasoning": "Detour.", "score": 0.25}, {"continuous": True}),
    ({"score": False}, {"use_reasoning": False}),
    ({"reasoning": "Half.", "score": 0.5}, {"choices": [0, 0.5, 1]}),
]


@pytest.mark.parametrize(("answer", "options"), CASES)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (agentevals.create_trajectory_llm_as_judge, agentevals_judge),
        (openevals.create_trajectory_llm_as_judge, openevals_judge),
    ],
    ids=["agentevals", "openevals"],
)
def test_trajectory_judge_returns_the_peers_dict(ours, theirs, answer, options) -> None:
    for reference in (None, REFERENCE):
        got = ours(judge=our_model(**answer), **options)(
            outputs=TRAJECTORY, reference_outputs=reference
        )
        expected = theirs(judge=peer_model(**answer), **options)(
            outputs=TRAJECTORY, reference_outputs=reference
        )
        assert got == expected
    assert got["metadata"] is None
    assert got["comment"] == answer.get("reasoning")


@pytest.mark.parametrize(("answer", "options"), CASES)
def test_graph_judge_returns_agentevals_dict(answer, options) -> None:
    judge = agentevals.create_graph_trajectory_llm_as_judge(judge=our_model(**answer), **options)
    peer = agentevals_graph_judge(judge=peer_model(**answer), **options)
    got = judge(inputs=GRAPH["inputs"], outputs=GRAPH)
    assert got == peer(inputs=GRAPH["inputs"], outputs=GRAPH)
    assert got["key"] == "graph_trajectory_accuracy"


async def test_awaited_judges_return_the_peers_dicts() -> None:
    answer = {"reasoning": "Fine.", "score": True}
    judge = openevals.create_async_trajectory_llm_as_judge(judge=our_model(**answer))
    peer = openevals_async_judge(judge=peer_model(**answer))
    expected = {"key": "trajectory_accuracy", "score": True, "comment": "Fine.", "metadata": None}
    assert await judge(outputs=TRAJECTORY) == await peer(outputs=TRAJECTORY) == expected
    graph_judge = agentevals.create_async_graph_trajectory_llm_as_judge(judge=our_model(**answer))
    graph_peer = agentevals_async_graph_judge(judge=peer_model(**answer))
    got = await graph_judge(inputs=GRAPH["inputs"], outputs=GRAPH)
    assert got == await graph_peer(inputs=GRAPH["inputs"], outputs=GRAPH)


def test_a_judge_without_a_verdict_raises_as_the_peers_do() -> None:
    with pytest.raises(openai.AuthenticationError):
        agentevals_judge(judge=ScriptedJudge.of(auth_error()))(outputs=TRAJECTORY)
    judge = agentevals.create_trajectory_llm_as_judge(judge=ScriptedJudge.of(auth_error()))
    with pytest.raises(JudgeError) as raised:
        judge(outputs=TRAJECTORY)
    assert str(raised.value) == (
        "trajectory_accuracy: the judge gave no verdict: the judge model call failed after "
        "1 attempt(s) (AuthenticationError: Incorrect API key)"
    )


def test_a_custom_output_schema_returns_the_models_answer() -> None:
    schema = {
        "title": "review",
        "type": "object",
        "properties": {"score": {"type": "boolean"}, "note": {"type": "string"}},
        "required": ["score", "note"],
    }
    judge = openevals.create_trajectory_llm_as_judge(
        judge=our_model(score=True, note="tidy"), output_schema=schema
    )
    assert judge(outputs=TRAJECTORY) == {"score": True, "note": "tidy"}
