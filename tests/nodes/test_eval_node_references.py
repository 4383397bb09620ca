"""EvalNode with one multi-field reference: each evaluator reads its own part.

The host is the weather agent with an eval node after the model
(``agent -> evaluate -> tools``, see :mod:`tests.nodes.hosts`). The node
evaluates the thread so far (``source="thread"``) at both turns, with a graph
judge, a graph prefix match, a tool-call evaluator and a custom evaluator
given only ``reference["output"]``. The reference comes as a fixed value, from
the run config or from the state.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from graphs import weather
from lg_eval import GraphTrajectory
from lg_eval.evaluators import (
    create_graph_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)
from lg_eval.nodes import EvalMessagesState, EvalNode, EvalSpec, from_config, from_state
from tests.nodes.hosts import QUESTION, RESUME, arun_both_turns, aware_host, config
from tests.nodes.references import JUDGE_REASONING, SF_CALL, AnswerCheck, judge

HOST_ROUTE = [["__start__", "agent", "evaluate", "tools", "__interrupt__"], ["agent", "evaluate"]]
HOST_TRAJECTORY = GraphTrajectory(
    inputs=[{"messages": [{"role": "user", "content": weather.QUESTION}]}, weather.HUMAN_ANSWER],
    results=[{}, {"messages": [{"role": "assistant", "content": weather.FINAL_ANSWER}]}],
    steps=HOST_ROUTE,
)
REFERENCE: dict[str, Any] = {
    "trajectory": HOST_TRAJECTORY,
    "tool_calls": [SF_CALL],
    "output": weather.FINAL_ANSWER,
}
PLAIN_REFERENCE = {**REFERENCE, "trajectory": HOST_TRAJECTORY.model_dump()}


class ReferenceState(EvalMessagesState):
    """The host state with the reference carried in it."""

    reference: dict[str, Any]


def host(reference: Any, answer: AnswerCheck, graph_judge: Any, saver: Any, **options: Any) -> Any:
    specs = [
        graph_judge,
        create_graph_trajectory_match_evaluator(trajectory_match_mode="prefix"),
        create_trajectory_match_evaluator(trajectory_match_mode="superset"),
        EvalSpec(answer, reference_key="output"),
        EvalSpec(answer, key="expected_answer", reference_key="expected_answer"),
    ]
    return aware_host(
        lambda app: EvalNode(specs, source="thread", graph=app, reference=reference),
        checkpointer=saver,
        **options,
    )


MISSING = (
    "ReferenceKeyError: EvalSpec(reference_key='expected_answer'): the reference has no "
    "'expected_answer' key (its keys: 'trajectory', 'tool_calls', 'output'). Add "
    "'expected_answer' to the reference, or change reference_key."
)
FAILED = f"Evaluator 'answer_check' failed: {MISSING}"


def expected_records(turn: int, answered: bool) -> list[tuple[Any, ...]]:
    """What each evaluator says at ``turn``: every part matches what the thread has done so far."""
    return [
        (turn, "graph_trajectory_accuracy", True, JUDGE_REASONING, True, None),
        (turn, "graph_trajectory_prefix_match", True, None, True, None),
        (turn, "trajectory_superset_match", True, None, True, None),
        (turn, "final_answer", answered, None if answered else "Differs.", answered, None),
        (
            turn,
            "expected_answer",
            None,
            f"Evaluator 'answer_check' failed: {MISSING}",
            None,
            MISSING,
        ),
    ]


def records(values: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (r["turn"], r["key"], r["score"], r["comment"], r["passed"], r["error"])
        for r in values["evaluations"]
    ]


@pytest.mark.parametrize("given", ["fixed", "config", "state"])
def test_every_evaluator_reads_its_part_of_the_reference_at_every_turn(given, sqlite_saver):
    answer = AnswerCheck()
    model, graph_judge = judge(repeat=True)
    reference = {"fixed": REFERENCE, "config": from_config("reference")}.get(
        given, from_state("reference")
    )
    options = {"state": ReferenceState} if given == "state" else {}
    graph = host(reference, answer, graph_judge, sqlite_saver, **options)
    cfg = config(reference=PLAIN_REFERENCE) if given == "config" else config()
    question = {**QUESTION, "reference": PLAIN_REFERENCE} if given == "state" else QUESTION
    graph.invoke(question, cfg)
    graph.invoke(RESUME, cfg)
    values = graph.get_state(cfg).values
    assert records(values) == expected_records(0, False) + expected_records(1, True)
    assert answer.seen == [weather.FINAL_ANSWER, weather.FINAL_ANSWER]  # never the whole
    reference_blocks = [call.prompt.partition("<reference_thread>")[2] for call in model.calls]
    assert len(reference_blocks) == 2
    for block in reference_blocks:
        assert "__start__ -> agent -> evaluate -> tools -> __interrupt__" in block
        assert "get_weather" not in block  # the judge is shown the trajectory part only
    final = values["messages"][-1]
    assert isinstance(final, BaseMessage) and final.text == weather.FINAL_ANSWER


async def test_awaited_in_an_async_host_the_records_are_the_same(async_sqlite_saver):
    answer = AnswerCheck()
    _, graph_judge = judge(repeat=True)
    graph = host(from_config("reference"), answer, graph_judge, async_sqlite_saver)
    cfg = config(reference=PLAIN_REFERENCE)
    await arun_both_turns(graph, cfg)
    values = (await graph.aget_state(cfg)).values
    assert records(values) == expected_records(0, False) + expected_records(1, True)
    assert answer.seen == [weather.FINAL_ANSWER, weather.FINAL_ANSWER]


def test_a_fixed_reference_is_the_same_at_every_run_whatever_an_evaluator_does(sqlite_saver):
    seen: list[int] = []

    def meddler(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> bool:
        seen.append(len(reference_outputs["tool_calls"]))
        reference_outputs["tool_calls"].clear()
        return True

    reference = {"tool_calls": [SF_CALL]}
    graph = aware_host(
        lambda app: EvalNode([meddler], reference=reference), checkpointer=sqlite_saver
    )
    graph.invoke(QUESTION, config())
    graph.invoke(RESUME, config())
    assert (seen, reference) == ([1, 1], {"tool_calls": [SF_CALL]})
