"""Each built-in's ``needs_reference`` declaration, checked by calling it on a real thread.

A sweep refuses the evaluators declared to need a reference, so the declaration must be
right: one declared reference-free scores a real thread with ``reference_outputs=None``
and ignores a reference when given one; one declared to need it raises without one, or
scores differently with the thread's own expectations (it reads them).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.datasets import Expected
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import (
    available_evaluators,
    get_evaluator,
    needs_reference,
    reference_free_evaluators,
    register_evaluator,
)
from lg_eval.evaluators._catalog import BUILTINS, NEEDS_REFERENCE
from lg_eval.evaluators._registry import _NEEDS_REFERENCE, _REGISTRY, is_builtin
from lg_eval.experiments._score import case_outputs, final_messages, reference_of
from lg_eval.extract import extract_thread
from tests.experiments.conftest import USER
from tests.experiments.graphs import build_agent

OPTIONS: dict[str, dict[str, Any]] = {
    # made only with options; none of them an expectation of the thread
    "call_budget": {"max_tool_calls": 5},
    "specialized_tool_usage": {"rules": {"answer": "lookup"}},
}


@pytest.fixture(scope="module")
def thread(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    """A real thread's ``outputs`` as a run or sweep hands them over, and the reference a
    golden case of that same thread states (plus keywords and a JSON schema)."""
    path = Path(tmp_path_factory.mktemp("needs")) / "c.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = build_agent(SqliteSaver(conn))
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke(USER[0]["input"], config)
    extracted = extract_thread(graph, config)
    conn.close()
    messages = final_messages(extracted)
    outputs = case_outputs(extracted, messages)
    calls = [call for m in messages or [] for call in getattr(m, "tool_calls", [])]
    expected = Expected.model_validate(
        {
            "trajectory": {"steps": extracted.to_graph_trajectory().steps},
            "tool_calls": [{"name": c["name"], "args": c["args"]} for c in calls],
            "output": outputs["output"],
        }
    )
    reference = {**(reference_of(expected) or {}), "keywords": ["42"], "schema": {}}
    return outputs, reference


def call(name: str, outputs: Any, reference: Any) -> Any:
    evaluator = get_evaluator(name, **OPTIONS.get(name, {}))
    return evaluator(outputs=outputs, reference_outputs=reference)


def test_every_builtin_declares_and_the_registry_says_so() -> None:
    assert set(NEEDS_REFERENCE) == set(BUILTINS)
    for name in BUILTINS:
        assert is_builtin(name)
        assert needs_reference(name) is NEEDS_REFERENCE[name]
    declared = {n for n in available_evaluators() if needs_reference(n) is False}
    assert reference_free_evaluators() == sorted(declared)
    assert needs_reference("rubric") is None  # judges are registered without a declaration
    assert needs_reference("no-such-evaluator") is None


@pytest.mark.parametrize("name", sorted(n for n, needs in NEEDS_REFERENCE.items() if needs))
def test_an_evaluator_declared_to_need_a_reference_cannot_score_without_one(name, thread):
    outputs, reference = thread
    try:
        without = call(name, outputs, None)
    except TrajectoryFormatError as exc:
        assert "needs reference_outputs" in str(exc)
        return
    assert without != call(name, outputs, reference)  # it reads the reference


@pytest.mark.parametrize("name", reference_free_evaluators())
def test_a_reference_free_evaluator_scores_a_real_thread_without_one(name, thread):
    outputs, reference = thread
    without = call(name, outputs, None)
    items = without if isinstance(without, list) else [without]
    assert all(item["score"] is not None for item in items)
    assert call(name, outputs, reference) == without  # it does not read the reference


def test_composite_is_as_its_parts() -> None:
    assert needs_reference("composite") is None
    with pytest.raises(InvalidOptionError):
        get_evaluator("composite")


@pytest.fixture
def clean_registry():
    saved, declared = dict(_REGISTRY), dict(_NEEDS_REFERENCE)
    yield
    _REGISTRY.clear()
    _REGISTRY.update(saved)
    _NEEDS_REFERENCE.clear()
    _NEEDS_REFERENCE.update(declared)


def test_a_user_declares_their_own(clean_registry) -> None:
    def mine(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> bool:
        return bool(reference_outputs)

    register_evaluator("mine", mine, needs_reference=True)
    assert needs_reference("mine") is True
    register_evaluator("mine", lambda **_: True, replace=True)
    assert needs_reference("mine") is None  # a replacement keeps no old declaration


@given(st.one_of(st.integers(), st.text(), st.floats(), st.lists(st.booleans())))
def test_the_declaration_is_a_bool_or_none(value: Any) -> None:
    with pytest.raises(InvalidOptionError, match=r"needs_reference=.*use True, False or None"):
        register_evaluator("declared", lambda **_: True, needs_reference=value)
