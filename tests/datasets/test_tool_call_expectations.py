"""``expected.tool_calls`` in a dataset file: bare tool names or ``{name, args}`` (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval.datasets import ToolCallExpectation, load_dataset
from lg_eval.errors import DatasetError

CASE = """\
name: refunds
cases:
  - id: refund-42
    turns: [{{input: {{messages: [{{role: user, content: refund order 42}}]}}}}]
    expected:
      tool_calls: {calls}
"""


def load(tmp_path: Path, calls: str):
    path = tmp_path / "refunds.yaml"
    path.write_text(CASE.format(calls=calls))
    return load_dataset(path)


def test_a_bare_tool_name_is_a_call_with_any_arguments(tmp_path: Path) -> None:
    dataset = load(tmp_path, "[lookup_order, {name: refund, args: {order_id: '42'}}]")
    assert dataset.cases[0].expected.tool_calls == [
        ToolCallExpectation(name="lookup_order", args=None),
        ToolCallExpectation(name="refund", args={"order_id": "42"}),
    ]


def test_a_call_that_is_neither_names_the_field_and_the_accepted_forms(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as error:
        load(tmp_path, "[refund, 42]")
    assert str(error.value) == (
        f"{tmp_path / 'refunds.yaml'}:6: case 'refund-42', expected.tool_calls[1]: a tool call "
        "is a tool name (refund) or a mapping with name and optional args (name: refund, "
        "args: {order_id: '42'}), not int"
    )
    assert "ToolCallExpectation" not in str(error.value)


def test_a_single_name_instead_of_a_list_says_tool_calls_is_a_list(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"expected: tool_calls is a list of tool calls"):
        load(tmp_path, "refund")


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.characters(categories=("L", "N"), include_characters="_"), min_size=1))
def test_every_non_empty_name_validates_as_a_bare_call(name: str) -> None:
    assert ToolCallExpectation.model_validate(name) == ToolCallExpectation(name=name)
