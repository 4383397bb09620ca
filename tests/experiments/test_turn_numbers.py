"""Turn numbers in what a user reads.

A message about a scripted turn names it ``turns[i]``: its 0-based index in the dataset
file's ``turns:`` list, the same in dataset errors, player errors, case errors and the
reports' table of turns played. Prose about a thread's own turns counts them from 1
("turn 2"): evaluator comments, JUnit, the trajectory diff, extraction warnings, the
``assert_*`` helpers and the trajectory table all name a thread's second turn "2"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs import breakpoint as static_breakpoint
from graphs import flaky, shapes
from lg_eval import extract_thread
from lg_eval._display import trajectory_text
from lg_eval.datasets import load_dataset
from lg_eval.errors import DatasetError
from lg_eval.experiments import run_experiment
from lg_eval.reports import build_report, render_html, render_junit, render_markdown
from lg_eval.testing import assert_hitl, assert_trajectory

# turns[1] is a state edit, so the resume that does not fit is turns[2], not "turn 2" or "turn 3"
EDITED = """\
name: edited
cases:
  - id: wrong-kind
    turns:
      - input: {request: r}
      - update: {values: {email: Edited.}}
      - resume: yes please
"""


def test_a_dataset_error_names_the_turn_by_its_index_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(EDITED.replace("resume: yes please", "resum: yes please"))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:7: case 'wrong-kind', turns[2]: a turn needs exactly one of input, resume, "
        "resume_by_node, resume_fn, continue, update (got none; unknown keys: resum)"
    )


def test_a_script_mismatch_names_the_turn_in_the_case_error_and_the_reports(
    tmp_path: Path,
) -> None:
    path = tmp_path / "edited.yaml"
    path.write_text(EDITED)
    run = run_experiment(
        static_breakpoint.build, path, checkpointer=InMemorySaver(), store=tmp_path / "r.sqlite"
    )
    (result,) = run.results
    assert result.status == "error"
    assert result.error == (
        "ScriptMismatchError: turns[2] (resume): the graph is not waiting for a human "
        "(it is paused before 'send_email')"
    )
    report = build_report(run)
    markdown = render_markdown(report)
    assert "| turns[0] | input |" in markdown
    assert "| turns[1] | update |" in markdown
    html = render_html(report)
    assert "<td>turns[0]</td><td>input</td>" in html
    assert "<td>turns[1]</td><td>update</td>" in html


def test_a_turn_that_raised_is_named_by_its_index(tmp_path: Path) -> None:
    path = tmp_path / "flaky.yaml"
    path.write_text("name: flaky\ncases:\n  - id: once\n    turns:\n      - input: {query: q}\n")
    run = run_experiment(
        flaky.build, path, checkpointer=InMemorySaver(), store=tmp_path / "r.sqlite", retries=0
    )
    (result,) = run.results
    assert result.error is not None
    assert result.error.startswith("turns[0] raised FlakyServiceError: ")
    assert result.error.endswith("; the script did not continue.")


# The breakpoint graph's real second turn is [send_email]; this reference expects another.
WRONG_SECOND_TURN = """\
name: wrong-second
evaluators: [graph_trajectory_strict_match]
cases:
  - id: second-differs
    turns:
      - input: {request: r}
      - continue: true
    expected:
      trajectory:
        steps:
          - [__start__, draft_email, __interrupt__]
          - [draft_email]
"""


def test_the_second_turn_of_a_thread_is_turn_2_in_comments_junit_and_diff(tmp_path: Path) -> None:
    path = tmp_path / "wrong.yaml"
    path.write_text(WRONG_SECOND_TURN)
    run = run_experiment(
        static_breakpoint.build, path, checkpointer=InMemorySaver(), store=tmp_path / "r.sqlite"
    )
    (result,) = run.results
    (score,) = result.scores
    assert score.comment is not None and score.comment.startswith("Turn 2: ")
    report = build_report(run)
    (diff,) = [d for d in report.cases[0].diff if not d.match]
    assert diff.turn == 1  # the field is the Python index into thread.turns
    assert "| 2 | **draft\\_email** | **send\\_email** |" in render_markdown(report)
    junit = render_junit(report)
    assert "Turn 2: step 1 differs" in junit
    assert "\nturn 2: step 1: expected 'draft_email', got 'send_email'</failure>" in junit


def _breakpoint_thread() -> tuple[Any, dict[str, Any]]:
    graph = static_breakpoint.build(InMemorySaver())
    config = {"configurable": {"thread_id": "numbered"}}
    graph.invoke({"request": "r"}, config)
    graph.invoke(None, config)
    return graph, config


def test_assert_messages_count_a_threads_turns_from_1() -> None:
    graph, config = _breakpoint_thread()
    thread = extract_thread(graph, config)
    with pytest.raises(AssertionError) as info:
        assert_trajectory(thread, [["__start__", "draft_email", "__interrupt__"], ["draft_email"]])
    assert str(info.value).splitlines() == [
        "trajectory does not match (mode=strict); turns differing: 2",
        "  turn 1: ok        __start__ -> draft_email -> __interrupt__",
        "  turn 2: expected  draft_email",
        "          actual    send_email",
    ]
    with pytest.raises(AssertionError) as info:
        assert_hitl(thread, [[], ["send_email"]])
    assert str(info.value).splitlines() == [
        "interrupts do not match; turns differing: 2",
        "  turn 1: ok        (no interrupt)",
        "  turn 2: expected  send_email",
        "          actual    (no interrupt)",
    ]


def test_the_trajectory_table_numbers_rows_from_1() -> None:
    graph, config = _breakpoint_thread()
    rows = trajectory_text(extract_thread(graph, config)).splitlines()
    numbers = [line.split("│")[1].strip() for line in rows if line.startswith("│")]
    assert [n for n in numbers if n] == ["1", "2"]


def test_an_extraction_warning_names_the_turn_from_1() -> None:
    """Two ``Send`` tasks of ``check`` ask; one id-keyed resume answers both in turn 2."""
    graph = shapes.build_send_checks(InMemorySaver())
    config = {"configurable": {"thread_id": "checks"}}
    graph.invoke({"log": []}, config)
    pending = graph.get_state(config).interrupts
    graph.invoke(Command(resume={i.id: "ok" for i in pending}), config)
    (warning,) = extract_thread(graph, config).warnings
    assert warning.startswith("Turn 2 resumes 2 interrupts at once; ")
