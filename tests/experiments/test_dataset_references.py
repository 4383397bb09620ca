"""An evaluator a dataset names reads the dataset's own ``expected`` forms, and a reference
it needs that a case lacks is one rule for ``lg-eval run`` and ``lg-eval dataset validate``.

The newcomer's dataset: ``evaluators: [keywords]`` with ``expected.output: {contains: [...]}``
(the form the dataset docs show) used to error on every case. Now the evaluator reads it;
a case without the field gets no verdict, a field in a form the evaluator cannot read is an
error, and ``dataset validate`` says so per case and evaluator in the same words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from typer.testing import CliRunner

from graphs import weather
from lg_eval import run_experiment
from lg_eval._effects import drive
from lg_eval.cli import app
from lg_eval.datasets import dataset_from_dict
from lg_eval.experiments import CaseResult, check_dataset, score_thread
from lg_eval.experiments._score import EvaluatorResolver, reference_of
from lg_eval.extract import extract_thread

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
TURNS = [
    {"input": {"messages": [{"role": "user", "content": weather.QUESTION}]}},
    {"resume": weather.HUMAN_ANSWER},
]
STEPS = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
NO_OUTPUT = (
    "keywords needs expected.output (a text, {equals: ...} or {contains: [...]}), which the "
    "case does not state"
)


def weather_dataset(evaluators: list[Any], *cases: tuple[str, dict[str, Any]]) -> Any:
    return dataset_from_dict(
        {
            "name": "w",
            "graph": "graphs.weather:build",
            "evaluators": evaluators,
            "cases": [{"id": i, "turns": TURNS, "expected": e} for i, e in cases],
        },
        allows_code=True,
    )


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return {"checkpointer": "memory://", "store": tmp_path / "r.sqlite", "judge_cache": False}


def rows(run: Any) -> dict[str, list[tuple[Any, ...]]]:
    return {
        r.case_id: [(s.key, s.score, s.passed, s.comment, s.error) for s in r.scores]
        for r in run.results
    }


def test_keywords_named_in_a_dataset_read_its_contains_form(here) -> None:
    data = weather_dataset(
        ["keywords"],
        ("sunny", {"output": {"contains": ["sunny", "75"]}}),
        ("rainy", {"output": {"contains": ["rain", "75"]}}),
        ("nothing", {}),
    )
    run = run_experiment(None, data, **here)
    assert rows(run) == {
        "sunny": [("keywords", 1.0, True, None, None)],
        "rainy": [("keywords", 0.5, False, "Keywords not found: rain.", None)],
        "nothing": [("keywords", None, None, f"{NO_OUTPUT}.", None)],
    }
    assert [r.status for r in run.results] == ["passed", "failed", "failed"]


def test_text_metrics_read_the_equals_form_and_refuse_contains(here) -> None:
    data = weather_dataset(
        ["exact_match"],
        ("equals", {"output": {"equals": weather.FINAL_ANSWER}}),
        ("text", {"output": weather.FINAL_ANSWER}),
        ("contains", {"output": {"contains": ["sunny"]}}),
    )
    run = run_experiment(None, data, **here)
    wrong = (
        "DatasetError: exact_match compares the answer with a whole text, and expected.output "
        "is {contains: [...]}: write output: '...' or {equals: ...}, or use keywords."
    )
    assert rows(run) == {
        "equals": [("exact_match", True, True, None, None)],
        "text": [("exact_match", True, True, None, None)],
        "contains": [("exact_match", None, None, None, wrong)],
    }
    assert [r.status for r in run.results] == ["passed", "passed", "error"]


def test_hitl_match_without_a_trajectory_is_as_a_trajectory_without_resumes(here) -> None:
    data = weather_dataset(
        ["hitl_match"], ("none", {}), ("steps-only", {"trajectory": {"steps": STEPS}})
    )
    run = run_experiment(None, data, **here)
    reason = (
        "hitl_match needs expected.trajectory's interrupts or resumes (what was asked and "
        "answered per turn), which the case does not state."
    )
    assert (
        rows(run)["none"]
        == rows(run)["steps-only"][:1]
        == [("hitl_match", None, None, reason, None)]
    )
    asked = weather_dataset(
        ["hitl_match"],
        ("asked", {"trajectory": {"steps": STEPS, "resumes": [None, weather.HUMAN_ANSWER]}}),
    )
    assert rows(run_experiment(None, asked, **here))["asked"][0][:3] == ("hitl_match", True, True)


def test_validate_says_per_case_and_evaluator_what_a_run_will_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    path = tmp_path / "golden.yaml"
    path.write_text(
        "name: g\ngraph: graphs.weather:build\nevaluators: [keywords]\ncases:\n"
        "  - id: sunny\n    turns: [{input: {messages: []}}]\n"
        "    expected: {output: {contains: [sunny]}}\n"
        "  - id: bare\n    turns: [{input: {messages: []}}]\n"
    )
    valid = runner.invoke(app, ["dataset", "validate", str(path)])
    assert valid.exit_code == 0
    assert valid.stdout.splitlines()[:2] == [
        f"{path}: 2 cases, valid",
        f"  no verdict: case 'bare', the dataset's evaluators[0]: {NO_OUTPUT}; a run gives "
        "it no verdict",
    ]
    path.write_text(path.read_text().replace("[keywords]", "[rouge_l]"))
    wrong = runner.invoke(app, ["dataset", "validate", str(path)])
    assert wrong.exit_code == 2
    assert wrong.stdout == ""
    assert wrong.stderr.splitlines() == [
        f"lg-eval: {path}: case 'sunny', the dataset's evaluators[0]: rouge_l compares the "
        "answer with a whole text, and expected.output is {contains: [...]}: write output: "
        "'...' or {equals: ...}, or use keywords; a run records an error",
        f"lg-eval: {path}: case 'bare', the dataset's evaluators[0]: rouge_l needs "
        "expected.output (a text, {equals: ...} or {contains: [...]}), which the case does "
        "not state; a run gives it no verdict",
    ]


@pytest.fixture(scope="module")
def played() -> Any:
    """The weather thread, played for real and extracted once."""
    graph = weather.build(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage(weather.QUESTION)]}, config)
    graph.invoke(Command(resume=weather.HUMAN_ANSWER), config)
    return extract_thread(graph, config)


RULED = [
    "graph_trajectory_strict_match", "graph_trajectory_match", "graph_trajectory_similarity",
    "hitl_match", "trajectory_match", "tool_sequence", "tool_selection_accuracy",
    "tool_selection_f1", "tool_order", "argument_precision", "step_efficiency", "json_schema",
    "exact_match", "contains", "levenshtein", "rouge_l", "bleu", "word_error_rate",
    "token_overlap", "keywords",
]  # fmt: skip
EXPECTED = st.fixed_dictionaries(
    {},
    optional={
        "trajectory": st.sampled_from(
            [{"steps": STEPS}, {"steps": STEPS, "resumes": [None, weather.HUMAN_ANSWER]}]
        ),
        "tool_calls": st.just([{"name": "get_weather", "args": {"city": "sf"}}]),
        "output": st.sampled_from(
            [weather.FINAL_ANSWER, {"equals": weather.FINAL_ANSWER}, {"contains": ["sunny"]}]
        ),
    },
)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RULED), EXPECTED)
def test_validate_and_run_apply_one_rule(played: Any, name: str, expected: dict) -> None:
    """Whatever a case states, what validate says of an evaluator is what the run does."""
    data = dataset_from_dict(
        {"name": "g", "evaluators": [name], "cases": [{"id": "c", "turns": TURNS,
                                                      "expected": expected}]}
    )  # fmt: skip
    checked = check_dataset(data)
    (case,) = data.cases
    first = EvaluatorResolver(data).for_case(case)[:1]
    result = CaseResult(run_id="r", case_id="c", status="error")
    scored = drive(score_thread(result, played, first, reference=reference_of(case.expected),
                                thresholds={}))  # fmt: skip
    (row,) = scored.scores
    if checked.no_verdicts:
        assert (row.score, row.passed, row.error) == (None, None, None)
        assert row.comment is not None and checked.no_verdicts[0].startswith(
            f"case 'c', the dataset's evaluators[0]: {row.comment[:-1]}; "
        )
    elif checked.problems:
        assert row.error is not None and row.error.startswith("DatasetError: ")
        assert checked.problems[0].startswith(
            f"case 'c', the dataset's evaluators[0]: {row.error[14:-1]}; "
        )
    else:  # the case has what the evaluator needs: it scores (an error would be a bug)
        assert row.error is None, row.error
        assert row.score is not None or name == "hitl_match"
