"""A case's ``user:`` as data: every field checked where the file is read, each mistake one
``DatasetError`` naming the case and the field; code it names is refused unless the dataset
allows code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval.datasets import dataset_from_dict, load_dataset
from lg_eval.errors import DatasetError
from lg_eval.experiments import check_dataset

USER = {"persona": "a customer", "goal": "a refund"}


def loaded(**user: Any) -> Any:
    return dataset_from_dict({"name": "d", "cases": [{"id": "c", "user": {**USER, **user}}]})


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ({"max_turns": 0}, "case 'c', user.max_turns: Input should be greater than or equal to 1"),
        ({"persona": ""}, "case 'c', user.persona: String should have at least 1 character"),
        (
            {"interrupts": {"approve": "manager"}},
            "case 'c', user.interrupts: interrupts is user, reviewer or script, or a mapping of "
            "top-level node names to one of them (approve_refund: reviewer), not "
            "{'approve': 'manager'}",
        ),
        ({"stop": {"state": "done"}}, "case 'c', user.stop.state: String should match pattern"),
        ({"stop": {"tool_call": 3}}, "case 'c', user.stop.tool_call: a tool call is a tool name"),
        ({"voice": "loud"}, "case 'c', user.voice: Extra inputs are not permitted"),
    ],
)
def test_a_mistake_in_the_user_is_one_error_naming_the_field(
    user: dict[str, Any], message: str
) -> None:
    with pytest.raises(DatasetError) as caught:
        loaded(**user)
    assert message in str(caught.value)


@given(
    max_turns=st.integers(min_value=-5, max_value=1100),
    seed=st.none() | st.integers(min_value=-(2**31), max_value=2**31),
    route=st.sampled_from(["user", "reviewer", "script", "boss", ""]),
)
def test_any_turn_limit_seed_and_route_is_a_user_or_a_dataset_error(
    max_turns: int, seed: int | None, route: str
) -> None:
    good = 1 <= max_turns <= 1000 and route in ("user", "reviewer", "script")
    try:
        user = loaded(max_turns=max_turns, seed=seed, interrupts=route).cases[0].user
    except DatasetError as exc:
        assert not good
        assert "case 'c', user." in str(exc)
    else:
        assert good
        assert (user.max_turns, user.seed, user.route("any_node")) == (max_turns, seed, route)


def test_a_user_naming_code_is_refused_by_data_that_may_not_run_code() -> None:
    remote = loaded(model="support.users:customer", stop={"state": "support.checks:done"})
    assert remote.code_references() == [
        ("case 'c', user.model", "support.users:customer"),
        ("case 'c', user.stop.state", "support.checks:done"),
    ]
    check = check_dataset(remote)
    assert [problem.split(" names code")[0] for problem in check.problems] == [
        "case 'c', user.model 'support.users:customer'",
        "case 'c', user.stop.state 'support.checks:done'",
    ]


def test_a_yaml_file_round_trips_a_user(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        "name: d\ncases:\n  - id: c\n    user:\n      persona: a customer\n"
        "      goal: a refund\n      model: openai:gpt-4o-mini\n"
        "      interrupts: {approve: reviewer}\n      answers: [yes]\n"
    )
    (case,) = load_dataset(path).cases
    assert case.user is not None
    assert (case.user.route("approve"), case.user.route("ask"), case.user.answers) == (
        "reviewer",
        "user",
        [True],  # YAML's yes
    )
    assert case.user.model_reference is None
