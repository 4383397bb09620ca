"""Every message about a scripted turn names it ``turns[i]``: its 0-based index in the
dataset file's ``turns:`` list, the same in dataset errors, player errors, case errors and
the reports' table of turns played."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import breakpoint as static_breakpoint
from graphs import flaky
from lg_eval.datasets import load_dataset
from lg_eval.errors import DatasetError
from lg_eval.experiments import run_experiment
from lg_eval.reports import build_report, render_html, render_markdown

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
