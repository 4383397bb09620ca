"""The contract over every built-in evaluator, fuzzed (see tests/contract/contract.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lg_eval import Evaluator
from lg_eval.evaluators import (
    available_evaluators,
    create_call_budget_evaluator,
    create_composite_evaluator,
    create_graph_trajectory_match_evaluator,
    create_json_schema_evaluator,
    create_keywords_evaluator,
    create_specialized_tool_evaluator,
    create_step_efficiency_evaluator,
    create_tool_selection_evaluator,
    create_tool_sequence_evaluator,
    create_trajectory_match_evaluator,
    get_evaluator,
)
from tests.contract.contract import check_evaluator, fuzz
from tests.contract.strategies import answers, any_outputs, deep, graphs, json_ish, messages

NEEDS_OPTIONS: dict[str, dict[str, Any]] = {
    "call_budget": {"max_tool_calls": 2, "max_tokens": 10},
    "specialized_tool_usage": {"rules": {"arxiv": "paper_reader"}},
}


def builtins() -> dict[str, Evaluator[Any]]:
    """Every registered evaluator, plus the modes and options registry names do not reach."""
    built = {
        name: get_evaluator(name, **NEEDS_OPTIONS.get(name, {}))
        for name in available_evaluators()
        if name != "composite"
    }
    for mode in ("unordered", "subset", "superset"):
        built[f"trajectory_match_{mode}"] = create_trajectory_match_evaluator(
            trajectory_match_mode=mode, tool_args_match_mode="superset"
        )
    for mode in ("in_order", "superset"):
        built[f"tool_sequence_{mode}"] = create_tool_sequence_evaluator(
            ["search", {"name": "answer", "args": {"q": 1}}], trajectory_match_mode=mode
        )
    for mode in ("unordered", "prefix"):
        built[f"graph_{mode}"] = create_graph_trajectory_match_evaluator(
            trajectory_match_mode=mode, scope="thread"
        )
    built["selection_fixed"] = create_tool_selection_evaluator(["search"], penalize_extra=True)
    built["steps_fixed"] = create_step_efficiency_evaluator((1, 3), count="model_calls")
    built["budget_all"] = create_call_budget_evaluator(
        max_model_calls=1, max_cost=0.5, input_token_price=0.01, output_token_price=0.02
    )
    built["keywords_any"] = create_keywords_evaluator(["a", "ab"], mode="any")
    built["schema_fixed"] = create_json_schema_evaluator({"type": "object"})
    built["specialized_query"] = create_specialized_tool_evaluator({"a": "search"}, scope="query")
    built["composite"] = create_composite_evaluator(
        {"order": get_evaluator("tool_order"), "exact": get_evaluator("exact_match")},
        {"order": 2, "exact": 1},
    )
    return built


BUILTINS = builtins()


@fuzz(150)
@given(name=st.sampled_from(sorted(BUILTINS)), data=st.data())
def test_every_builtin_keeps_the_contract(name: str, data: st.DataObject) -> None:
    evaluator = BUILTINS[name]
    shaped = {"trajectory": graphs(), "messages": messages(), "output": answers()}.get(
        evaluator.reads or "", any_outputs()
    )
    outputs = data.draw(st.one_of(shaped, any_outputs(), st.none()), label="outputs")
    reference = data.draw(st.one_of(shaped, st.none()), label="reference_outputs")
    inputs = data.draw(st.one_of(st.none(), json_ish(4)), label="inputs")
    check_evaluator(evaluator, outputs=outputs, reference_outputs=reference, inputs=inputs)


@fuzz(40)
@given(
    name=st.sampled_from(sorted(BUILTINS)), outputs=deep(), reference=st.one_of(st.none(), deep())
)
def test_deep_nesting_never_crashes_an_evaluator(name: str, outputs: Any, reference: Any) -> None:
    check_evaluator(BUILTINS[name], outputs=outputs, reference_outputs=reference)
