"""Loading, validating and writing dataset files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lg_eval.datasets import (
    Case,
    ContinueTurn,
    Dataset,
    EvaluatorRef,
    InputTurn,
    OutputMatch,
    ResumeByNodeTurn,
    ResumeFnTurn,
    ResumeTurn,
    UpdateTurn,
    dataset_from_dict,
    dataset_hash,
    dump_dataset,
    load_dataset,
)
from lg_eval.errors import DatasetError

GOLDEN = Path(__file__).parent.parent.parent / "examples" / "golden"

WEATHER_YAML = """\
name: weather-golden
graph: graphs.weather:build
evaluators:
  - graph_trajectory_strict_match
  - {name: graph_trajectory_match, options: {trajectory_match_mode: superset}}
cases:
  - id: sunny-sf
    tags: [hitl]
    turns:
      - input: {messages: [{role: user, content: "what's the weather in sf?"}]}
      - resume: "It's sunny and 75 degrees"
    expected:
      trajectory: {steps: [[__start__, agent, tools, __interrupt__], [agent]]}
      tool_calls: [{name: get_weather, args: {city: sf}}]
      output: {contains: [sunny]}
      max_steps: 12
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_yaml_dataset_loads_into_models(tmp_path: Path) -> None:
    dataset = load_dataset(write(tmp_path, "golden.yaml", WEATHER_YAML))
    assert dataset.name == "weather-golden"
    assert dataset.graph == "graphs.weather:build"
    assert dataset.evaluators == [
        EvaluatorRef(name="graph_trajectory_strict_match"),
        EvaluatorRef(name="graph_trajectory_match", options={"trajectory_match_mode": "superset"}),
    ]
    (case,) = dataset.cases
    assert case.turns == [
        InputTurn(input={"messages": [{"role": "user", "content": "what's the weather in sf?"}]}),
        ResumeTurn(resume="It's sunny and 75 degrees"),
    ]
    assert case.expected.trajectory is not None
    assert case.expected.trajectory.steps == [
        ["__start__", "agent", "tools", "__interrupt__"],
        ["agent"],
    ]
    assert case.expected.output == OutputMatch(contains=["sunny"])
    assert case.expected.max_steps == 12
    assert dataset.source == tmp_path / "golden.yaml"
    assert dataset.allows_code and case.allows_code
    assert dataset.evaluators_for(case) == dataset.evaluators


def test_every_turn_kind_parses_to_its_model() -> None:
    case = Case.model_validate(
        {
            "id": "all",
            "turns": [
                {"input": {"x": 1}},
                {"resume": "yes"},
                {"resume_by_node": {"a:b": 1}},
                {"resume_fn": "examples.answers:weather_report"},
                {"continue": True},
                {"update": {"values": {"x": 2}, "as_node": "a"}},
            ],
        }
    )
    assert [type(t) for t in case.turns] == [
        InputTurn,
        ResumeTurn,
        ResumeByNodeTurn,
        ResumeFnTurn,
        ContinueTurn,
        UpdateTurn,
    ]
    assert [t.kind for t in case.turns] == [
        "input",
        "resume",
        "resume_by_node",
        "resume_fn",
        "continue",
        "update",
    ]


def test_a_turn_with_two_kinds_names_file_line_case_and_turn(tmp_path: Path) -> None:
    text = WEATHER_YAML.replace(
        '      - resume: "It\'s sunny and 75 degrees"\n',
        '      - resume: "It\'s sunny and 75 degrees"\n        input: {x: 1}\n',
    )
    path = write(tmp_path, "golden.yaml", text)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:11: case 'sunny-sf', turns[1]: a turn needs exactly one of input, resume, "
        "resume_by_node, resume_fn, continue, update (got resume, input)"
    )


def test_a_turn_with_no_kind_lists_its_unknown_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "d.yaml",
        "name: d\ncases:\n  - id: c1\n    turns:\n      - {resum: x}\n",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:5: case 'c1', turns[0]: a turn needs exactly one of input, resume, "
        "resume_by_node, resume_fn, continue, update (got none; unknown keys: resum)"
    )


def test_a_bad_field_inside_a_turn_gets_its_full_path(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "d.yaml",
        "name: d\ncases:\n  - id: c1\n    turns:\n      - input: {x: 1}\n"
        "      - update: {values: {x: 2}, as_nod: a}\n",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:6: case 'c1', turns[1].update.as_nod: Extra inputs are not permitted"
    )


def test_an_expectation_error_names_the_case_and_field(tmp_path: Path) -> None:
    text = WEATHER_YAML.replace("max_steps: 12", "max_steps: many")
    path = write(tmp_path, "golden.yaml", text)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:16: case 'sunny-sf', expected.max_steps: Input should be a valid integer, "
        "unable to parse string as an integer"
    )


def test_output_match_needs_exactly_one_of_contains_or_equals(tmp_path: Path) -> None:
    text = WEATHER_YAML.replace("output: {contains: [sunny]}", "output: {}")
    path = write(tmp_path, "golden.yaml", text)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:15: case 'sunny-sf', expected.output: write exactly one of contains: [...] or "
        "equals: '...'"
    )


def test_duplicate_case_ids_are_refused_with_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "d.yaml",
        "name: d\ncases:\n  - id: a\n    turns: [{input: 1}]\n  - id: a\n    turns: [{input: 2}]\n",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:5: case 'a': duplicate case id (first used at line 3); case ids must be unique."
    )


def test_yaml_syntax_errors_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "d.yaml", "name: d\ncases:\n  - id: [unclosed\n    turns: []\n")
    with pytest.raises(DatasetError, match=rf"^{path}:4: invalid YAML: "):
        load_dataset(path)


def test_python_tags_are_refused_and_nothing_runs(tmp_path: Path) -> None:
    flag = tmp_path / "pwned"
    path = write(
        tmp_path,
        "evil.yaml",
        f"name: evil\ncases:\n  - id: c\n    turns:\n"
        f"      - input: !!python/object/apply:os.system ['touch {flag}']\n",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:5: invalid YAML: the tag !!python/object/apply:os.system is not allowed: "
        "datasets are read with yaml.safe_load, which builds only plain data (write the value "
        "without the tag)."
    )
    assert not flag.exists()


def test_provenance_fields_cannot_be_written_in_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, "d.yaml", "name: d\nallows_code: false\ncases: []\n")
    with pytest.raises(DatasetError, match=rf"^{path}:2: 'allows_code' cannot be written"):
        load_dataset(path)


def test_jsonl_header_and_one_case_per_line(tmp_path: Path) -> None:
    rows = [
        {"dataset": {"name": "j", "graph": "graphs.flaky:build", "evaluators": ["exact_match"]}},
        {"id": "c1", "turns": [{"input": {"query": "q"}}, {"continue": True}]},
        {"id": "c2", "turns": [{"input": {"query": "r"}}], "tags": ["x"]},
    ]
    path = write(tmp_path, "d.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    dataset = load_dataset(path)
    assert (dataset.name, dataset.graph) == ("j", "graphs.flaky:build")
    assert dataset.evaluators == [EvaluatorRef(name="exact_match")]
    assert dataset.case_ids() == ["c1", "c2"]
    assert dataset.allows_code


def test_jsonl_without_header_is_named_after_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "smoke.jsonl", '{"id": "c", "turns": [{"input": 1}]}\n\n')
    assert load_dataset(path).name == "smoke"


def test_jsonl_errors_name_the_line_and_case(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "d.jsonl",
        '{"id": "ok", "turns": [{"input": 1}]}\n'
        '{"id": "bad", "turns": [{"resume": 1, "continue": true}]}\n',
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:2: case 'bad', turns[0]: a turn needs exactly one of input, resume, "
        "resume_by_node, resume_fn, continue, update (got resume, continue)"
    )
    bad_json = write(tmp_path, "e.jsonl", '{"id": "ok", "turns": [{"input": 1}]}\n{nope\n')
    with pytest.raises(DatasetError, match=rf"^{bad_json}:2: not valid JSON: "):
        load_dataset(bad_json)
    dup = write(tmp_path, "f.jsonl", '{"id": "a", "turns": [{"input": 1}]}\n' * 2)
    with pytest.raises(DatasetError) as info:
        load_dataset(dup)
    assert str(info.value) == (
        f"{dup}:2: case 'a': duplicate case id (first used at line 1); case ids must be unique."
    )


def test_yaml_round_trip_gives_an_equal_dataset_and_hash(tmp_path: Path) -> None:
    dataset = load_dataset(write(tmp_path, "golden.yaml", WEATHER_YAML))
    again = load_dataset(dump_dataset(dataset, tmp_path / "again.yaml"))
    assert again.model_dump() == dataset.model_dump()
    assert dataset_hash(again) == dataset_hash(dataset)
    dumped = yaml.safe_load((tmp_path / "again.yaml").read_text())
    assert dumped["evaluators"][0] == "graph_trajectory_strict_match"
    assert dumped["cases"][0]["expected"]["trajectory"] == {
        "steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
    }


def test_jsonl_round_trip_of_every_example_dataset(tmp_path: Path) -> None:
    for path in sorted(GOLDEN.glob("*.yaml")):
        dataset = load_dataset(path)
        jsonl = load_dataset(dump_dataset(dataset, tmp_path / f"{path.stem}.jsonl"))
        assert jsonl.model_dump() == dataset.model_dump(), path.name
        assert dataset_hash(jsonl) == dataset_hash(dataset)


def test_dataset_hash_is_stable_and_sees_changes() -> None:
    data = {"name": "d", "cases": [{"id": "c", "turns": [{"continue": True}]}]}
    first = dataset_from_dict(data)
    assert dataset_hash(first) == dataset_hash(dataset_from_dict(data))
    assert dataset_hash(first) == dataset_hash(first.model_copy(update={"source": Path("x")}))
    changed = dataset_from_dict({**data, "name": "e"})
    assert dataset_hash(changed) != dataset_hash(first)
    assert len(dataset_hash(first)) == 64


def test_data_from_elsewhere_does_not_allow_code() -> None:
    data = {
        "name": "remote",
        "graph": "graphs.weather:build",
        "evaluators": ["pkg.module:my_evaluator"],
        "cases": [{"id": "c", "turns": [{"input": 1}, {"resume_fn": "m:f"}]}],
    }
    dataset = dataset_from_dict(data)
    assert not dataset.allows_code
    assert not dataset.cases[0].allows_code
    assert dataset.code_references() == [
        ("graph", "graphs.weather:build"),
        ("evaluators[0]", "pkg.module:my_evaluator"),
        ("case 'c', turns[1].resume_fn", "m:f"),
    ]
    with pytest.raises(DatasetError, match="'allows_code' cannot be written"):
        dataset_from_dict({**data, "allows_code": True})
    assert Dataset(name="local", cases=[]).allows_code is False


def test_case_level_graph_and_evaluators_override_the_dataset() -> None:
    dataset = dataset_from_dict(
        {
            "name": "d",
            "graph": "graphs.weather:build",
            "evaluators": ["exact_match"],
            "cases": [
                {"id": "a", "turns": [{"input": 1}]},
                {
                    "id": "b",
                    "graph": "graphs.flaky:build",
                    "evaluators": [],
                    "turns": [{"input": 1}],
                },
            ],
        }
    )
    a, b = dataset.cases
    assert (dataset.target_for(a), dataset.target_for(b)) == (
        "graphs.weather:build",
        "graphs.flaky:build",
    )
    assert (dataset.evaluators_for(a), dataset.evaluators_for(b)) == (
        [EvaluatorRef(name="exact_match")],
        [],
    )


def test_the_example_datasets_load() -> None:
    datasets = [load_dataset(p) for p in sorted(GOLDEN.glob("*.yaml"))]
    cases = [c for d in datasets for c in d.cases]
    assert len(cases) == 17
    assert [c.id for c in cases if "regression-demo" in c.tags] == ["weather-regression-demo"]
    kinds = {t.kind for c in cases for t in c.turns}
    assert kinds == {"input", "resume", "resume_by_node", "resume_fn", "continue", "update"}
