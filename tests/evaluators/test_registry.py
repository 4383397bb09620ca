"""The evaluator registry: built-ins by stable name, custom ones by register_evaluator()."""

from __future__ import annotations

import pytest

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import available_evaluators, get_evaluator, register_evaluator
from lg_eval.evaluators._registry import _REGISTRY, is_builtin

BUILTINS = {
    "graph_trajectory_accuracy",
    "trajectory_accuracy",
    "rubric",
    "hitl_match",
    "argument_precision",
    "bleu",
    "call_budget",
    "composite",
    "contains",
    "exact_match",
    "graph_trajectory_match",
    "graph_trajectory_similarity",
    "graph_trajectory_strict_match",
    "json_schema",
    "json_valid",
    "keywords",
    "levenshtein",
    "reasoning_coherence",
    "redundancy",
    "rouge_l",
    "source_citation",
    "specialized_tool_usage",
    "step_efficiency",
    "token_overlap",
    "tool_order",
    "tool_selection_accuracy",
    "tool_selection_f1",
    "tool_sequence",
    "trajectory_match",
    "word_error_rate",
}


@pytest.fixture
def clean_registry():
    saved = dict(_REGISTRY)
    yield
    _REGISTRY.clear()
    _REGISTRY.update(saved)


def test_every_builtin_is_registered():
    assert set(available_evaluators()) >= BUILTINS
    assert available_evaluators() == sorted(available_evaluators())


def test_get_builds_with_options():
    evaluator = get_evaluator("trajectory_match", trajectory_match_mode="unordered")
    assert evaluator(outputs=[], reference_outputs=[])["key"] == "trajectory_unordered_match"
    assert (
        get_evaluator("tool_selection_f1", expected_tools=["a"])(outputs=["a"])["key"]
        == "tool_selection_f1"
    )


def test_get_returns_ready_evaluators_without_options():
    assert get_evaluator("json_valid")(outputs="{}")["score"] is True


async def test_get_async_builds_the_twin():
    result = await get_evaluator("exact_match").as_async()(outputs="A", reference_outputs="a")
    assert result["score"] is True


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(InvalidOptionError, match="Known evaluators: argument_precision, bleu"):
        get_evaluator("meteor")


def test_unknown_options_name_the_accepted_ones():
    with pytest.raises(InvalidOptionError, match="it accepts: expected_order"):
        get_evaluator("tool_order", order=["a"])
    with pytest.raises(InvalidOptionError, match="no options"):
        get_evaluator("json_valid", strict=True)


def test_bad_option_values_still_fail_at_creation():
    with pytest.raises(ValueError, match="'strict', 'unordered', 'subset' or 'superset'"):
        get_evaluator("trajectory_match", trajectory_match_mode="fuzzy")


def test_register_as_decorator_on_a_factory(clean_registry):
    @register_evaluator("answer_length")
    def create_answer_length(max_chars: int = 10):
        return make_evaluator(
            "answer_length", lambda *, outputs, **_: Feedback(score=len(outputs) <= max_chars)
        )

    assert get_evaluator("answer_length", max_chars=3)(outputs="abcd")["score"] is False
    assert create_answer_length.__name__ == "create_answer_length"


def test_register_a_ready_evaluator(clean_registry):
    def shouty(*, outputs, reference_outputs=None, **_):
        return {"key": "shouty", "score": outputs.isupper(), "comment": None, "metadata": None}

    register_evaluator("shouty", shouty)
    assert get_evaluator("shouty")(outputs="HEY")["score"] is True


def test_taken_names_need_replace(clean_registry):
    with pytest.raises(InvalidOptionError, match="already registered"):
        register_evaluator("exact_match", lambda **_: None)
    register_evaluator("exact_match", get_evaluator("contains"), replace=True)
    assert get_evaluator("exact_match")(outputs="a b", reference_outputs="b")["key"] == "contains"


def test_registering_the_same_factory_twice_is_harmless(clean_registry):
    def create_x():
        return get_evaluator("json_valid")

    register_evaluator("x", create_x)
    register_evaluator("x", create_x)
    assert "x" in available_evaluators()


@pytest.mark.parametrize(("name", "factory"), [("", lambda: None), ("ok", 42)])
def test_register_rejects_bad_arguments(name, factory):
    with pytest.raises(InvalidOptionError):
        register_evaluator(name, factory)


JUDGES = {"graph_trajectory_accuracy", "trajectory_accuracy", "rubric"}


def test_is_builtin_names_lg_evals_deterministic_evaluators_only(clean_registry):
    assert {name for name in BUILTINS if is_builtin(name)} == BUILTINS - JUDGES
    register_evaluator("mine", lambda **_: True)
    assert not is_builtin("mine")
    assert not is_builtin("no-such-evaluator")


def test_a_replaced_builtin_is_no_longer_builtin(clean_registry):
    register_evaluator("exact_match", lambda: lambda **_: True, replace=True)
    assert not is_builtin("exact_match")
