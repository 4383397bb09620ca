"""The drop-in graph trajectory names against the real agentevals 0.0.9.

``graph_trajectory_strict_match`` (called or awaited) returns agentevals' dict on
generated step lists, and extraction then scoring a played thread gives agentevals'
answer on the thread shapes agentevals reads right (the extraction itself is held
equal to agentevals' in tests/test_agentevals_parity.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agentevals.graph_trajectory.strict import (
    graph_trajectory_strict_match as agentevals_strict,
)
from agentevals.graph_trajectory.strict import (
    graph_trajectory_strict_match_async as agentevals_strict_async,
)
from agentevals.graph_trajectory.utils import (
    extract_langgraph_trajectory_from_thread as agentevals_extract,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from graphs.scenarios import SCENARIOS
from lg_eval.compat import agentevals

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONFIG = {"configurable": {"thread_id": "t"}}
steps = st.lists(
    st.lists(st.sampled_from(["__start__", "a", "b", "sub:c"]), max_size=3), max_size=3
)


def trajectory(turns: list[list[str]]) -> dict[str, Any]:
    return {"inputs": [{"__start__": {}} for _ in turns], "results": [], "steps": turns}


@SETTINGS
@given(steps, steps)
def test_strict_match_returns_agentevals_dict(actual, reference) -> None:
    outputs, expected = trajectory(actual), {"results": [], "steps": reference}
    ours = agentevals.graph_trajectory_strict_match(outputs=outputs, reference_outputs=expected)
    assert ours == agentevals_strict(outputs=outputs, reference_outputs=expected)


@settings(SETTINGS, max_examples=50)
@given(steps, steps)
def test_awaited_strict_match_returns_agentevals_dict(actual, reference) -> None:
    outputs, expected = trajectory(actual), {"results": [], "steps": reference}

    async def both() -> tuple[Any, Any]:
        ours = agentevals.graph_trajectory_strict_match_async
        return (
            await ours(outputs=outputs, reference_outputs=expected),
            await agentevals_strict_async(outputs=outputs, reference_outputs=expected),
        )

    ours, theirs = asyncio.run(both())
    assert ours == theirs


@pytest.mark.parametrize("name", ["weather", "map_reduce", "command_goto", "hitl_agent"])
def test_extract_then_score_gives_agentevals_answer(name: str) -> None:
    graph = SCENARIOS[name].played(InMemorySaver())
    ours = agentevals.extract_langgraph_trajectory_from_thread(graph, CONFIG)
    theirs = agentevals_extract(graph, CONFIG)
    for reference in (theirs["outputs"], {"results": [], "steps": [["__start__"]]}):
        scored = agentevals.graph_trajectory_strict_match(
            inputs=ours["inputs"], outputs=ours["outputs"], reference_outputs=reference
        )
        assert scored == agentevals_strict(
            inputs=theirs["inputs"], outputs=theirs["outputs"], reference_outputs=reference
        )
    assert scored["score"] is False
