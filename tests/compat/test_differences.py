"""Where the drop-ins' answers differ from a peer's, each case with both answers.

The peers' answers come from the real agentevals 0.0.9 and openevals 0.2.2; ours
from lg_eval.compat, held to the documented semantics (docs/agentevals.md) and,
for extraction, to what LangGraph's own stream says ran in each turn.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

import pytest
from agentevals.graph_trajectory.utils import (
    extract_langgraph_trajectory_from_thread as agentevals_extract,
)
from agentevals.trajectory.match import create_trajectory_match_evaluator as agentevals_match
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from openevals.trajectory.match import create_trajectory_match_evaluator as openevals_match

import lg_eval
from lg_eval.compat import agentevals, openevals
from lg_eval.errors import TrajectoryFormatError


def f(**args: Any) -> dict[str, Any]:
    return {"function": {"name": "f", "arguments": json.dumps(args)}}


def said(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": "", "tool_calls": list(calls)}]


def result(mode: str, score: bool) -> dict[str, Any]:
    return {"key": f"trajectory_{mode}_match", "score": score, "comment": None, "metadata": None}


def scores(outputs: Any, reference: Any, **options: Any) -> dict[str, Any]:
    """Each implementation's dict for one case: the peers', then the drop-ins'."""
    factories = {
        "agentevals": agentevals_match,
        "openevals": openevals_match,
        "compat.agentevals": agentevals.create_trajectory_match_evaluator,
        "compat.openevals": openevals.create_trajectory_match_evaluator,
    }
    return {
        name: factory(**options)(outputs=outputs, reference_outputs=reference)
        for name, factory in factories.items()
    }


# --- field paths a call lacks: the one rule where the peers disagree ----------------------


@pytest.mark.parametrize(
    ("actual", "reference"),
    [
        (f(time={"end": 1}), f(time={"end": 1})),  # missing on both sides
        (f(time={"start": None}), f(time={})),  # present as None on one side only
    ],
)
def test_a_missing_field_path_matches_in_agentevals_names_only(actual, reference) -> None:
    got = scores(said(actual), said(reference), tool_args_match_overrides={"f": ["time.start"]})
    assert got == {
        "agentevals": result("strict", True),
        "openevals": result("strict", False),
        "compat.agentevals": result("strict", True),
        "compat.openevals": result("strict", False),
    }


def test_a_field_present_as_none_on_both_sides_matches_in_both() -> None:
    call = f(time={"start": None})
    got = scores(said(call), said(call), tool_args_match_overrides={"f": ["time.start"]})
    assert got == dict.fromkeys(got, result("strict", True))


# --- where a peer's answer is wrong --------------------------------------------------------


def test_first_fit_pairing_misses_a_pairing_the_drop_ins_find() -> None:
    """f() may take f(a=1) or f(b=2); first-fit gives it f(a=1), which f(a=1) needed."""
    got = scores(
        said(f(a=1), f(b=2)),
        said(f(), f(a=1)),
        trajectory_match_mode="superset",
        tool_args_match_mode="superset",
    )
    assert got == {
        "agentevals": result("superset", False),
        "openevals": result("superset", False),
        "compat.agentevals": result("superset", True),
        "compat.openevals": result("superset", True),
    }


@pytest.mark.parametrize("mode", ["subset", "unordered"])
def test_agentevals_applies_argument_rules_backwards_in_the_subset_direction(mode) -> None:
    """Actual f(a=1, b=2) holds every argument of the reference f(a=1): a superset."""
    got = scores(
        said(f(a=1, b=2)), said(f(a=1)), trajectory_match_mode=mode, tool_args_match_mode="superset"
    )
    assert got == {
        "agentevals": result(mode, False),
        "openevals": result(mode, True),  # fixed in openevals 0.2.2
        "compat.agentevals": result(mode, True),
        "compat.openevals": result(mode, True),
    }


def test_a_missing_reference_is_an_error_not_an_empty_trajectory() -> None:
    assert agentevals_match()(outputs=said(f(a=1)), reference_outputs=None) == result(
        "strict", False
    )
    with pytest.raises(TrajectoryFormatError, match="needs reference_outputs"):
        agentevals.create_trajectory_match_evaluator()(outputs=said(f(a=1)), reference_outputs=None)


# --- lg_eval's own evaluators keep saying what differed ------------------------------------


def test_the_root_names_are_lg_evals_own_evaluators_with_their_feedback() -> None:
    evaluator = lg_eval.evaluators.create_trajectory_match_evaluator(
        tool_args_match_overrides={"f": ["time.start"]}, require_override_fields=True
    )
    got = evaluator(outputs=said(f(time={"end": 1})), reference_outputs=said(f(time={"end": 1})))
    calls = [{"index": 0, "name": "f", "args": {"time": {"end": 1}}}]
    assert got == {
        "key": "trajectory_strict_match",
        "score": False,
        "comment": 'Message 0: Missing 1 expected call: f(time={"end": 1}). '
        'Unexpected 1 call: f(time={"end": 1}).',
        "metadata": {"message_index": 0, "pairs": [], "missing": calls, "unexpected": calls},
    }


# --- extraction: a static breakpoint inside a subgraph --------------------------------------


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def _writes(name: str) -> Any:
    def write(state: Log) -> Log:
        return {"log": [name]}

    return write


def _paused_subgraph_beside_a_sibling() -> Any:
    """``review`` (draft, then check, with a breakpoint before check) beside ``side``."""
    review = (
        StateGraph(Log)
        .add_node("draft", _writes("draft"))
        .add_node("check", _writes("check"))
        .add_edge(START, "draft")
        .add_edge("draft", "check")
        .compile(interrupt_before=["check"])
    )
    return (
        StateGraph(Log)
        .add_node("review", review)
        .add_node("side", _writes("side"))
        .add_node("join", _writes("join"))
        .add_edge(START, "review")
        .add_edge(START, "side")
        .add_edge(["review", "side"], "join")
        .compile(checkpointer=InMemorySaver())
    )


def test_a_subgraph_breakpoint_ends_the_turn_in_which_langgraph_paused() -> None:
    graph, config = _paused_subgraph_beside_a_sibling(), {"configurable": {"thread_id": "t"}}
    started = []  # node paths whose tasks LangGraph started, turn by turn
    for value in ({"log": []}, None):
        events = graph.stream(value, config, subgraphs=True, stream_mode="tasks")
        started.append(
            [
                (f"{ns[0].split(':')[0]}:" if ns else "") + event["name"]
                for ns, event in events
                if "result" not in event
            ]
        )
    assert started == [
        ["review", "side", "review:draft"],
        ["review", "side", "review:check", "join"],
    ]

    theirs = agentevals_extract(graph, config)
    assert theirs["inputs"] == [{"__start__": {"log": []}}, {"__start__": {"log": []}}]
    assert theirs["outputs"]["steps"] == [
        ["__start__", "side", "review", "review:__start__", "review:draft", "review:check"],
        ["join"],
    ]
    ours = agentevals.extract_langgraph_trajectory_from_thread(graph, config)
    assert ours == {
        "inputs": [{"__start__": {"log": []}}, "__resuming__"],
        "outputs": {
            "inputs": [],
            "results": [{}, {"log": ["draft", "check", "side", "join"]}],
            "steps": [
                [
                    "__start__",
                    "review",
                    "review:__start__",
                    "review:draft",
                    "side",
                    "__interrupt__",
                ],
                ["review:check", "join"],
            ],
        },
    }
