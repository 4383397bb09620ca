"""render_json: the whole report model as ``lg_eval.report/3``, validated by the shipped schema."""

from __future__ import annotations

import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs import weather
from lg_eval.experiments import ExperimentRun, open_store, run_experiment
from lg_eval.reports import (
    Report,
    build_report,
    json_schema,
    render_json,
    stream_report,
    write_json,
)
from lg_eval.reports._json import schema_text, shipped_schema
from tests.reports.conftest import info

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = (
    'python -c "from lg_eval.reports._json import schema_text; '
    "open('lg_eval/reports/schema/report-3.json', 'w').write(schema_text())\""
)


def validate(document: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(
        shipped_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    validator.validate(document)


@pytest.fixture(scope="module")
def weather_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[ExperimentRun, Path]:
    """The weather golden dataset played on the real ReAct graph, stored in SQLite."""
    here = tmp_path_factory.mktemp("weather")
    cwd = os.getcwd()
    os.chdir(ROOT)  # the dataset names its graph and answer functions relative to the repo
    try:
        run = run_experiment(
            None,
            "examples/golden/weather.yaml",
            checkpointer=f"sqlite:///{here / 'checkpoints.sqlite'}",
            store=f"sqlite:///{here / 'results.sqlite'}",
            run_id="weather-1",
        )
    finally:
        os.chdir(cwd)
    return run, here / "checkpoints.sqlite"


def test_the_shipped_schema_is_the_one_the_models_generate() -> None:
    shipped = (ROOT / "lg_eval" / "reports" / "schema" / "report-3.json").read_text()
    assert shipped == schema_text(), f"regenerate it: {REGENERATE}"
    assert shipped_schema() == json_schema()


def test_the_schema_names_the_version_and_forbids_unknown_members() -> None:
    schema = json_schema()
    assert schema["properties"]["schema"]["const"] == "lg_eval.report/3"
    assert schema["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError, match="'surprise' was unexpected"):
        validate({**json.loads(render_json(_empty_report())), "surprise": 1})


def test_a_document_of_another_version_is_refused_by_the_schema(
    support_run: ExperimentRun,
) -> None:
    document = json.loads(render_json(support_run))
    document["schema"] = "lg_eval.report/2"
    with pytest.raises(jsonschema.ValidationError, match=r"lg_eval\.report/3"):
        validate(document)


def test_round_trip_gives_the_report_model_back(support_run: ExperimentRun) -> None:
    report = build_report(support_run)
    text = render_json(report)
    assert Report.model_validate_json(text) == report
    assert json.loads(text)["schema"] == "lg_eval.report/3"


def test_every_case_carries_its_turns_trajectory_reference_and_feedback(
    support_run: ExperimentRun,
) -> None:
    document = json.loads(render_json(support_run))
    validate(document)
    assert document["cases"][1]["result"] == support_run.results[1].model_dump(mode="json")
    case, diff = document["cases"][1]["result"], document["cases"][1]["diff"]
    assert (case["case_id"], case["status"], case["run_id"]) == (
        "refund-over-limit",
        "failed",
        "run-0304",
    )
    assert case["trajectory"] == [
        ["classify", "lookup_order", "human_review"],
        ["approve", "respond"],
    ]
    assert case["expected_trajectory"][1] == ["approve", "refund", "respond"]
    assert case["turns"][0]["sent"] == {
        "messages": [{"role": "user", "content": "Refund order 1042, it arrived broken"}]
    }
    assert case["turns"][0]["asked"] == [
        {
            "id": "int-7",
            "path": "human_review",
            "value": {"question": "Approve a refund of $250 for order 1042?"},
        }
    ]
    assert case["turns"][1] == {
        "index": 1, "kind": "resume", "by": "script", "sent": {"approved": True}, "asked": [],
        "error": None, "reply": None,
    }  # fmt: skip
    judge = case["scores"][1]
    assert judge["comment"] == "The reviewer approved, yet the agent answered without refunding."
    assert judge["metadata"] == {"model": "scripted", "usage": {"input_tokens": 120}}
    assert diff[1]["missing"] == ["refund"]
    assert diff[1]["expected"][1] == {"name": "refund", "differs": True}
    cases = [c["result"]["case_id"] for c in document["cases"]]
    assert cases == [r.case_id for r in support_run.results]


def test_aggregates_travel_with_the_cases(support_run: ExperimentRun) -> None:
    document = json.loads(render_json(support_run))
    assert document["summary"]["counts"] == {"passed": 3, "failed": 2, "error": 1, "timeout": 1}
    assert document["summary"]["latency_p50_s"] == 1.2
    assert [e["key"] for e in document["evaluators"]][:2] == [
        "graph_trajectory_strict_match",
        "trajectory_accuracy",
    ]


def test_a_report_and_its_run_render_the_same(support_run: ExperimentRun) -> None:
    assert render_json(build_report(support_run)) == render_json(support_run)


def test_streamed_cases_give_the_same_document(support_run: ExperimentRun) -> None:
    report = build_report(support_run)
    out = io.StringIO()
    write_json(report, out, cases=iter(report.cases))
    assert json.loads(out.getvalue()) == json.loads(render_json(report))


def test_a_real_run_holds_what_langgraph_recorded(
    weather_run: tuple[ExperimentRun, Path],
) -> None:
    run, checkpoints = weather_run
    document = json.loads(render_json(run))
    validate(document)
    case = next(c["result"] for c in document["cases"] if c["result"]["case_id"] == "sunny-sf")
    # What LangGraph itself says about the same thread: the interrupt it raised after the
    # first turn, the tool calls in its final state, the nodes of its history.
    with SqliteSaver.from_conn_string(str(checkpoints)) as saver:
        graph = weather.build(saver)
        config = {"configurable": {"thread_id": case["thread_id"]}}
        state = graph.get_state(config)
        calls = [
            {"name": c["name"], "args": c["args"], "id": c["id"]}
            for m in state.values["messages"]
            for c in getattr(m, "tool_calls", [])
        ]
    assert (
        case["tool_calls"]
        == calls
        == [{"name": "get_weather", "args": {"city": "sf"}, "id": "call_weather_sf"}]
    )
    live = weather.build(InMemorySaver()).invoke(
        {"messages": [{"role": "user", "content": "what's the weather in sf?"}]},
        {"configurable": {"thread_id": "live"}},
    )
    (pending,) = live["__interrupt__"]
    (asked,) = case["turns"][0]["asked"]
    assert (asked["path"], asked["value"]) == ("tools", pending.value)
    assert case["turns"][1] == {
        "index": 1, "kind": "resume", "by": "script", "sent": "It's sunny and 75 degrees",
        "asked": [], "error": None, "reply": None,
    }  # fmt: skip
    assert case["trajectory"] == [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
    assert case["expected_trajectory"] == case["trajectory"]


def rounded(value: Any) -> Any:
    """``value`` with every float to 12 significant digits: a database sums in an order of
    its own, which may move a sum's last digit."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def test_a_stored_run_reported_in_sql_is_the_document_of_the_run_in_memory(
    weather_run: tuple[ExperimentRun, Path],
) -> None:
    run, checkpoints = weather_run
    with open_store(f"sqlite:///{checkpoints.parent / 'results.sqlite'}") as store:
        stored = json.loads(render_json(stream_report(store, "weather-1", worst=None)))
        loaded = json.loads(render_json(store.load_run("weather-1")))
    validate(stored)
    memory = json.loads(render_json(run))
    assert loaded == memory
    assert rounded(stored) == rounded({**memory, "trend": stored["trend"]})
    assert [p["run_id"] for p in stored["trend"]] == ["weather-1"]


def _empty_report() -> Report:
    return build_report(ExperimentRun(info=info("empty", datetime(2025, 1, 1, tzinfo=UTC))))
