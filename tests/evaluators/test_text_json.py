"""JSON validity and JSON Schema scorers."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import create_json_schema_evaluator, json_valid

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}


@pytest.mark.parametrize(
    ("outputs", "score"),
    [
        ('{"a": 1}', True),
        ('```json\n{"a": [1, 2]}\n```', True),
        ("[1, 2, 3]", True),
        ({"a": 1}, True),
        ("{a: 1}", False),
        ("", False),
        ([AIMessage('{"ok": true}')], True),
    ],
)
def test_json_valid(outputs, score):
    assert json_valid(outputs=outputs)["score"] is score


def test_json_valid_refuses_outputs_none():
    # json_valid(outputs=None) used to score False; no evaluator scores a missing run now
    with pytest.raises(TrajectoryFormatError, match="json_valid needs outputs; got None"):
        json_valid(outputs=None)


def test_json_valid_comment_has_the_position():
    result = json_valid(outputs='{"a": }')
    assert result["comment"] == "Not valid JSON: Expecting value at line 1, column 7."


def test_json_schema_valid_instance():
    result = create_json_schema_evaluator(SCHEMA)(outputs='{"name": "Zoë", "age": 3}')
    assert result == {
        "key": "json_schema",
        "score": True,
        "comment": None,
        "metadata": {"errors": []},
    }


def test_json_schema_lists_violations_with_paths():
    result = create_json_schema_evaluator(SCHEMA)(outputs={"age": "x", "tags": [1]})
    assert result["score"] is False
    assert [e["path"] for e in result["metadata"]["errors"]] == ["$", "$['age']", "$['tags'][0]"]
    assert result["comment"].startswith("3 schema violation(s): $: 'name' is a required property")


def test_json_schema_from_reference_outputs():
    evaluator = create_json_schema_evaluator()
    assert evaluator(outputs='{"name": "a"}', reference_outputs={"schema": SCHEMA})["score"] is True
    assert evaluator(outputs="{}", reference_outputs=SCHEMA)["score"] is False


def test_json_schema_unparsable_answer():
    result = create_json_schema_evaluator(SCHEMA)(outputs="not json")
    assert result["score"] is False and result["comment"].startswith("Not valid JSON")


def test_invalid_schema_fails_at_creation():
    with pytest.raises(InvalidOptionError, match="not a valid JSON Schema"):
        create_json_schema_evaluator({"type": "nope"})


async def test_json_valid_async():
    assert (await json_valid.as_async()(outputs="{}"))["score"] is True
