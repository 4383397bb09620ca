"""Argument match modes and per-tool overrides."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._tool_args import field_value, freeze
from lg_eval.evaluators._tool_calls import ArgsPolicy


@pytest.mark.parametrize(
    ("mode", "actual", "reference", "expected"),
    [
        ("exact", {"a": 1}, {"a": 1}, True),
        ("exact", {"a": 1, "b": 2}, {"a": 1}, False),
        ("ignore", {"a": 1}, {"z": 9}, True),
        ("subset", {"a": 1}, {"a": 1, "b": 2}, True),
        ("subset", {"a": 1, "b": 2}, {"a": 1}, False),
        ("subset", {}, {"a": 1}, True),
        ("superset", {"a": 1, "b": 2}, {"a": 1}, True),
        ("superset", {"a": 1}, {"a": 1, "b": 2}, False),
        ("superset", {"a": 2}, {"a": 1}, False),
        (
            "exact",
            {"f": {"city": "SF", "days": [1, 2]}},
            {"f": {"days": [1, 2], "city": "SF"}},
            True,
        ),
        ("exact", {"city": "Zürich"}, {"city": "Zürich"}, True),
    ],
)
def test_modes_compare_actual_args_against_reference_args(mode, actual, reference, expected):
    assert ArgsPolicy(mode).test("tool", actual, reference) is expected


def test_field_list_override_compares_only_the_dotted_paths():
    matching = ArgsPolicy("exact", {"search": ["filters.city", "q"]})
    actual = {"q": "x", "filters": {"city": "SF", "date": "today"}, "page": 2}
    reference = {"q": "x", "filters": {"city": "SF", "date": "tomorrow"}}
    assert matching.test("search", actual, reference)
    assert not matching.test("search", {**actual, "filters": {"city": "LA"}}, reference)


def test_field_paths_treat_missing_and_none_alike():
    assert field_value({"a": {"b": None}}, "a.b") is None
    assert field_value({"a": 3}, "a.b") is None
    assert ArgsPolicy("exact", {"t": ["a.b"]}).test("t", {}, {"a": {"b": None}})


def test_override_modes_and_callables_win_over_the_default_mode():
    matching = ArgsPolicy(
        "exact", {"loose": "ignore", "ci": lambda a, r: a["c"].lower() == r["c"].lower()}
    )
    assert matching.test("loose", {"a": 1}, {"a": 2})
    assert matching.test("ci", {"c": "SF"}, {"c": "sf"})
    assert not matching.test("other", {"a": 1}, {"a": 2})


def test_custom_rules_are_called_with_actual_args_first():
    seen = []
    ArgsPolicy("exact", {"t": lambda a, r: seen.append((a, r)) or True}).test(
        "t", {"x": 1}, {"y": 2}
    )
    assert seen == [({"x": 1}, {"y": 2})]


def test_unknown_mode_is_rejected_naming_the_allowed_modes():
    with pytest.raises(InvalidOptionError, match="exact, ignore, subset, superset"):
        ArgsPolicy("fuzzy")


@pytest.mark.parametrize("override", [[], [""], ["a..b"], [1], 3, "loose", {"a": 1}])
def test_bad_overrides_are_rejected_at_creation(override):
    with pytest.raises(ValueError, match=r"tool_args_match_overrides\['t'\]"):
        ArgsPolicy("exact", {"t": override})


def test_overrides_must_be_a_dict():
    with pytest.raises(InvalidOptionError, match="dict of tool name"):
        ArgsPolicy("exact", [("t", "ignore")])  # type: ignore[arg-type]


def test_freeze_is_equal_exactly_when_python_values_are_equal():
    assert freeze({"a": [1, {"b": 2}]}) == freeze({"a": [1.0, {"b": 2}]})
    assert hash(freeze({"a": [1]})) == hash(freeze({"a": [1.0]}))
    assert freeze({"a": [1, 2]}) != freeze({"a": [2, 1]})
