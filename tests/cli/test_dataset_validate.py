"""``lg-eval dataset validate`` resolves the names a dataset uses (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.datasets import dataset_from_dict
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import available_evaluators, get_evaluator
from lg_eval.experiments import check_dataset

ROOT = Path(__file__).parent.parent.parent
runner = CliRunner()

CASES = "cases:\n  - id: a\n    turns: [{input: {messages: []}}]\n"


def validate(tmp_path: Path, text: str):
    path = tmp_path / "golden.yaml"
    path.write_text(text)
    return runner.invoke(app, ["dataset", "validate", str(path)], catch_exceptions=False)


@pytest.fixture(autouse=True)
def repository_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))


def test_an_unknown_evaluator_is_exit_2_with_the_near_name(tmp_path: Path) -> None:
    result = validate(tmp_path, f"name: g\nevaluators: [hitl_mach]\n{CASES}")
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert (
        "evaluators[0]: no evaluator is registered as 'hitl_mach'; did you mean 'hitl_match'?"
        in text
    )
    assert "valid" not in text


def test_a_graph_module_that_does_not_import_is_exit_2(tmp_path: Path) -> None:
    result = validate(tmp_path, f"name: g\ngraph: graphs.nosuch:build\n{CASES}")
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert (
        "graph 'graphs.nosuch:build': importing module 'graphs.nosuch' failed with "
        "ModuleNotFoundError: No module named 'graphs.nosuch'." in text
    )


def test_options_a_factory_does_not_take_are_named(tmp_path: Path) -> None:
    text = f"name: g\nevaluators: [{{name: tool_sequence, options: {{modee: strict}}}}]\n{CASES}"
    result = validate(tmp_path, text)
    assert result.exit_code == 2
    assert "does not take these options" in " ".join(result.output.split())


def test_a_valid_dataset_says_what_was_not_checked(tmp_path: Path) -> None:
    text = f"name: g\ngraph: graphs.support:build\nevaluators: [tool_sequence, hitl_match]\n{CASES}"
    result = validate(tmp_path, text)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert text.startswith(f"{tmp_path / 'golden.yaml'}: 1 cases, valid no verdict: case 'a'")
    assert "not checked: whether each case's turns fit the graph" in text


def test_every_problem_is_listed_not_only_the_first() -> None:
    dataset = dataset_from_dict(
        {
            "name": "g",
            "evaluators": ["tool_sequnce"],
            "cases": [{"id": "a", "turns": [{"input": {}}], "evaluators": ["exact_mach"]}],
        }
    )
    assert check_dataset(dataset).problems == [
        "evaluators[0]: no evaluator is registered as 'tool_sequnce'; did you mean "
        "'tool_sequence'?",
        "case 'a', evaluators[0]: no evaluator is registered as 'exact_mach'; did you mean "
        "'exact_match'?",
    ]
    assert check_dataset(dataset).unchecked[-1].startswith("the target graph: the dataset names")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(available_evaluators()))
def test_a_registered_name_is_a_problem_exactly_when_a_run_could_not_build_it(name: str) -> None:
    dataset = dataset_from_dict({"name": "g", "evaluators": [name], "cases": []})
    try:
        get_evaluator(name)
    except InvalidOptionError as exc:
        assert check_dataset(dataset).problems == [f"evaluators[0]: {exc}"]
    else:
        assert check_dataset(dataset).problems == []
