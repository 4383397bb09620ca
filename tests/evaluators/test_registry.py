"""The evaluator registry: built-ins by stable name, custom ones by register()."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import available, get, get_async, register
from lg_eval.evaluators._base import Score, make_evaluator
from lg_eval.evaluators.registry import _REGISTRY

BUILTINS = {
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
    assert set(available()) >= BUILTINS
    assert available() == sorted(available())


def test_get_builds_with_options():
    evaluator = get("trajectory_match", trajectory_match_mode="unordered")
    assert evaluator(outputs=[], reference_outputs=[])["key"] == "trajectory_unordered_match"
    assert (
        get("tool_selection_f1", expected_tools=["a"])(outputs=["a"])["key"] == "tool_selection_f1"
    )


def test_get_returns_ready_evaluators_without_options():
    assert get("json_valid")(outputs="{}")["score"] is True


async def test_get_async_builds_the_twin():
    result = await get_async("exact_match")(outputs="A", reference_outputs="a")
    assert result["score"] is True


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(InvalidOptionError, match="Known evaluators: argument_precision, bleu"):
        get("meteor")


def test_unknown_options_name_the_accepted_ones():
    with pytest.raises(InvalidOptionError, match="it accepts: expected_order"):
        get("tool_order", order=["a"])
    with pytest.raises(InvalidOptionError, match="no options"):
        get("json_valid", strict=True)


def test_bad_option_values_still_fail_at_creation():
    with pytest.raises(ValueError, match="strict, unordered, subset, superset"):
        get("trajectory_match", trajectory_match_mode="fuzzy")


def test_register_as_decorator_on_a_factory(clean_registry):
    @register("answer_length")
    def create_answer_length(max_chars: int = 10):
        return make_evaluator(
            "answer_length", lambda *, outputs, **_: Score(len(outputs) <= max_chars)
        )

    assert get("answer_length", max_chars=3)(outputs="abcd")["score"] is False
    assert create_answer_length.__name__ == "create_answer_length"


def test_register_a_ready_evaluator(clean_registry):
    def shouty(*, outputs, reference_outputs=None, **_):
        return {"key": "shouty", "score": outputs.isupper(), "comment": None, "metadata": None}

    register("shouty", shouty)
    assert get("shouty")(outputs="HEY")["score"] is True


def test_taken_names_need_replace(clean_registry):
    with pytest.raises(InvalidOptionError, match="already registered"):
        register("exact_match", lambda **_: None)
    register("exact_match", get("contains"), replace=True)
    assert get("exact_match")(outputs="a b", reference_outputs="b")["key"] == "contains"


def test_registering_the_same_factory_twice_is_harmless(clean_registry):
    def create_x():
        return get("json_valid")

    register("x", create_x)
    register("x", create_x)
    assert "x" in available()


@pytest.mark.parametrize(("name", "factory"), [("", lambda: None), ("ok", 42)])
def test_register_rejects_bad_arguments(name, factory):
    with pytest.raises(InvalidOptionError):
        register(name, factory)
