"""Every rendering shows what the case expected beside what the agent said, so a failed
``keywords`` or ``exact_match`` check can be read from lg_eval's own output."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from rich.console import Console

from lg_eval.experiments import ExperimentRun, ScoreRow
from lg_eval.reports import (
    build_report,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    render_terminal,
)
from tests.reports.conftest import T0, info, result
from tests.reports.helpers import markdown_tables, parse_html

DECLINED = "Your refund of order 7 was declined."
KEYWORDS = ScoreRow(evaluator="keywords", key="keywords", score=0.5, passed=False,
                    comment="Keywords not found: approved.")  # fmt: skip
EXACT = ScoreRow(evaluator="exact_match", key="exact_match", score=False, passed=False)


def answer_run() -> ExperimentRun:
    """A keywords check that failed on a two-turn thread (the first turn asked a human), an
    exact answer that failed on a three-turn thread, and a case without an output check."""
    return ExperimentRun(
        info=info("run-said", T0),
        results=[
            result("refund", "failed", scores=[KEYWORDS], output=DECLINED, answers=[None, DECLINED],
                   expected_output={"contains": ["refund", "approved"]}),
            result("hello", "failed", scores=[EXACT], output="Bye.",
                   answers=["Hi there.", None, "Bye."], expected_output="Hello!"),
            result("route", "failed", scores=[EXACT.model_copy(update={"key": "graph"})]),
        ],
    )  # fmt: skip


def test_the_report_model_holds_expected_and_said() -> None:
    refund, hello, route = build_report(answer_run()).cases
    assert (refund.expected_label, refund.expected_text, refund.output) == (
        "expected (contains every keyword)",
        '"refund", "approved"',
        DECLINED,
    )
    assert (refund.answers, refund.turn_answers) == ([None, DECLINED], [])
    assert (hello.expected_label, hello.expected_text) == ("expected (exact answer)", "Hello!")
    assert hello.turn_answers == [(1, "Hi there."), (3, "Bye.")]
    assert (route.shows_answer, route.expected_label, route.answers) == (False, "expected", [])


def test_the_terminal_shows_expected_and_said_side_by_side() -> None:
    console = Console(record=True, width=120, file=io.StringIO())
    render_terminal(build_report(answer_run()), console=console)
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    start = lines.index("  expected vs said")
    assert lines[start + 2] == (
        "  ┃ expected (contains every keyword) ┃ said (the final answer)              ┃"
    )
    assert lines[start + 4] == (
        '  │ "refund", "approved"              │ Your refund of order 7 was declined. │'
    )
    hello = lines.index("  expected vs said", start + 1)
    assert lines[hello + 4] == "  │ Hello!                  │ Bye.                    │"
    assert [line.strip() for line in lines[hello + 6 : hello + 13]] == [
        "answers per turn",
        "┏━━━━━━┳━━━━━━━━━━━┓",
        "┃ turn ┃ said      ┃",
        "┡━━━━━━╇━━━━━━━━━━━┩",
        "│ 1    │ Hi there. │",
        "│ 3    │ Bye.      │",
        "└──────┴───────────┘",
    ]
    assert lines.count("  expected vs said") == 2  # the route case expects and says nothing


def test_markdown_shows_expected_and_said_in_one_row() -> None:
    tables = markdown_tables(render_markdown(build_report(answer_run())))
    said = [t for t in tables if t[0][-1] == "said (the final answer)"]
    assert said == [
        [["expected (contains every keyword)", "said (the final answer)"], ["---", "---"],
         ['"refund", "approved"', "Your refund of order 7 was declined."]],
        [["expected (exact answer)", "said (the final answer)"], ["---", "---"],
         ["Hello!", "Bye."]],
    ]  # fmt: skip
    assert [t for t in tables if t[0] == ["turn", "said"]] == [
        [["turn", "said"], ["---", "---"], ["1", "Hi there."], ["3", "Bye."]]
    ]


def test_the_html_report_shows_expected_and_said_in_the_failed_cases() -> None:
    tree = parse_html(render_html(build_report(answer_run())))
    refund = tree.find("article", id="case-0").find("div", cls="answer")
    heads = [node.text() for node in refund.find_all("div", cls="head")]
    assert heads == ["expected (contains every keyword)", "said (the final answer)"]
    assert refund.find("div", cls="expected").text() == '"refund", "approved"'
    assert refund.find("div", cls="said").text() == DECLINED
    hello = tree.find("article", id="case-1")
    assert [li.text() for li in hello.find("ol", cls="turn-answers").find_all("li")] == [
        "turn 1Hi there.",
        "turn 3Bye.",
    ]
    assert tree.find("article", id="case-2").find_all("div", cls="answer") == []


def test_junit_failures_say_what_was_expected_and_said() -> None:
    root = ET.fromstring(render_junit(build_report(answer_run())))
    failures = [case.find("failure") for case in root.findall("testsuite/testcase")]
    texts = [(f.text or "").splitlines() if f is not None else [] for f in failures]
    assert texts[0] == [
        "keywords=0.5: Keywords not found: approved.",
        'expected (contains every keyword): "refund", "approved"',
        f"said: {DECLINED}",
    ]
    assert texts[1][1:] == ["expected (exact answer): Hello!", "said: Bye."]
    assert texts[2] == ["graph=false"]


def test_the_json_report_and_its_schema_carry_the_answers() -> None:
    document: dict[str, Any] = json.loads(render_json(answer_run()))
    refund = document["cases"][0]
    assert (refund["output"], refund["expected_output"], refund["answers"]) == (
        DECLINED,
        {"contains": ["refund", "approved"]},
        [None, DECLINED],
    )
    assert document["cases"][2]["output"] is None and document["cases"][2]["answers"] == []


@pytest.mark.parametrize("said", ["", "   "])
def test_an_empty_answer_is_shown_as_said_not_as_missing(said: str) -> None:
    run = answer_run()
    run.results[0].output = said
    case = build_report(run).cases[0]
    tree = parse_html(render_html(build_report(run)))
    cell = tree.find("article", id="case-0").find("div", cls="said")
    assert (case.output, cell.find("pre").text()) == (said, said)
