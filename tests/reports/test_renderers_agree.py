"""Every rendering shows what the store holds: one stored run, reported on both paths (in
memory from the loaded run, in SQL from the store), read back out of the JSON, Markdown,
JUnit, HTML and terminal renderings and held to the stored results, value by value.

The expected values are written out from the results the run stored (``support_results``
in the conftest), not read from a rendering.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console

from lg_eval.experiments import ResultStore
from lg_eval.reports import (
    Report,
    build_report,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    render_terminal,
    stream_report,
)
from tests.reports.conftest import RUN_ID, make_support_run, support_results
from tests.reports.helpers import markdown_tables, parse_html
from tests.reports.test_stream import _store

STRICT = "graph_trajectory_strict_match"
JUDGE = "trajectory_accuracy"

# (label, status, tags, scores, latency) of each stored result, in the store's order (a
# case's repetitions together)
ROWS = [
    ("refund-happy", "passed", "refunds, smoke", f"{STRICT}=true, {JUDGE}=0.9", "1.20s"),
    ("refund-happy#1", "failed", "refunds, smoke", f"{STRICT}=false, {JUDGE}=0.5", "1.00s"),
    ("refund-over-limit", "failed", "refunds, hitl", f"{STRICT}=false, {JUDGE}=0.4", "3.40s"),
    ("cancel-order", "passed", "orders", f"{STRICT}=true, {JUDGE}=0.8", "800ms"),
    ("address-change", "error", "orders, hitl", "", "5.00s"),
    ("slow-search", "timeout", "search", "", "30.00s"),
    (
        "faq-shipping",
        "passed",
        "smoke",
        f"{STRICT}=true, tool_args_match=1, response_similarity=0.75",
        "600ms",
    ),
]
LATENCY = {
    "refund-happy": 1.2,
    "refund-happy#1": 1.0,
    "refund-over-limit": 3.4,
    "cancel-order": 0.8,
    "address-change": 5.0,
    "slow-search": 30.0,
    "faq-shipping": 0.6,
}
TOKENS = {
    "refund-happy": "800",
    "refund-happy#1": "900",
    "refund-over-limit": "1500",
    "cancel-order": "300",
    "address-change": "0",
    "slow-search": "0",
    "faq-shipping": "200",
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResultStore]:
    stored = _store(tmp_path, make_support_run())
    yield stored
    stored.close()


def _in_memory(store: ResultStore) -> Report:
    return build_report(store.load_run(RUN_ID))


def _in_sql(store: ResultStore) -> Report:
    return stream_report(store, RUN_ID, worst=None)


PATHS: dict[str, Callable[[ResultStore], Report]] = {"memory": _in_memory, "sql": _in_sql}


@pytest.fixture(params=sorted(PATHS))
def report(request: pytest.FixtureRequest, store: ResultStore) -> Report:
    return PATHS[request.param](store)


def test_json_cases_are_the_stored_results_field_for_field(report: Report) -> None:
    document = json.loads(render_json(report))
    written = {(r.case_id, r.repetition): r.model_dump(mode="json") for r in support_results()}
    listed = [case["result"] for case in document["cases"]]
    assert [(r["case_id"], r["repetition"]) for r in listed] == [
        ("refund-happy", 0),
        ("refund-happy", 1),
        ("refund-over-limit", 0),
        ("cancel-order", 0),
        ("address-change", 0),
        ("slow-search", 0),
        ("faq-shipping", 0),
    ]
    assert listed == [written[r["case_id"], r["repetition"]] for r in listed]
    diffs = {case["result"]["case_id"]: case["diff"] for case in document["cases"]}
    assert diffs["refund-over-limit"][1]["first_difference"] == 1
    assert [s["name"] for s in diffs["refund-over-limit"][1]["expected"]] == [
        "approve",
        "refund",
        "respond",
    ]
    assert [d for d in diffs.values() if d] == [diffs["refund-over-limit"]]


def test_markdown_case_table_shows_each_stored_result(report: Report) -> None:
    (cases,) = [t for t in markdown_tables(render_markdown(report)) if t[0][0] == "case"]
    unescaped = [[cell.replace("\\_", "_") for cell in row] for row in cases[2:]]
    assert unescaped == [list(row) for row in ROWS]


def test_html_case_table_shows_each_stored_result(report: Report) -> None:
    table = parse_html(render_html(report)).find("table", id="case-table")
    rows = []
    for tr in table.find("tbody").find_all("tr"):
        label, status, tags, *rest = tr.find_all("td")
        spans = ", ".join(span.text() for span in tags.find_all("span", "tag"))
        rows.append([label.text(), status.text(), spans, *(td.text() for td in rest)])
    assert rows == [[*row, TOKENS[row[0]]] for row in ROWS]
    statuses = [tr.attrs["data-status"] for tr in table.find("tbody").find_all("tr")]
    assert statuses == [row[1] for row in ROWS]


def test_junit_testcases_carry_each_stored_result(report: Report) -> None:
    suite = ET.fromstring(render_junit(report)).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("time")) for c in cases] == [
        (label, f"{LATENCY[label]:.3f}") for label, *_ in ROWS
    ]
    out = {c.get("name"): (c.findtext("system-out") or "").split("\n") for c in cases}
    assert out["refund-happy#1"] == [f"{STRICT} = false", f"{JUDGE} = 0.5"]
    assert out["faq-shipping"] == [
        f"{STRICT} = true",
        "tool_args_match = 1",
        "response_similarity = 0.75 (no verdict: no reason given)",
    ]
    assert out["address-change"] == ["no scores"]
    failures = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert sorted(failures) == ["refund-happy#1", "refund-over-limit"]
    assert failures["refund-happy#1"].get("message") == (  # type: ignore[union-attr]
        f"{STRICT}=false: Expected 1 turns, got 2.; {JUDGE}=0.5: Asked twice for the order id."
    )
    errors = {c.get("name"): c.find("error") for c in cases if c.find("error") is not None}
    assert {name: (e.get("type"), e.get("message")) for name, e in errors.items()} == {  # type: ignore[union-attr]
        "address-change": (
            "error",
            "GraphRecursionError: Recursion limit of 25 reached without a stop condition",
        ),
        "slow-search": ("timeout", "timed out after 30s"),
    }


def test_terminal_lists_each_failed_results_feedback(report: Report) -> None:
    console = Console(record=True, width=200, color_system=None)
    render_terminal(report, console=console)
    text = console.export_text()
    for line in (
        "Expected 1 turns, got 2.",
        "Asked twice for the order id.",
        "Turn 2: step 2 differs: expected 'refund', got 'respond'.",
        "The reviewer approved, yet the agent answered without refunding.",
        "GraphRecursionError: Recursion limit of 25 reached without a stop condition",
        "timed out after 30s",
    ):
        assert line in text
