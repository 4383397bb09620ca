"""What a user met sweeping production threads: evaluators that need a reference are
refused up front, and a sweep that finds nothing new stores no run."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.cli._common import INPUT_ERROR, PASSED
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import reference_free_evaluators
from lg_eval.experiments import open_store
from lg_eval.sweeps import sweep_threads
from tests.sweeps import helpers

runner = CliRunner()


def sweep(threads: dict[str, str], *evaluators: str) -> Any:
    return runner.invoke(
        app,
        [
            "sweep", "--graph", helpers.GRAPH, "--checkpointer", threads["checkpointer"],
            "--store", threads["store"], "--quiet",
            *[arg for name in evaluators for arg in ("--evaluator", name)],
        ],
    )  # fmt: skip


def stored_runs(threads: dict[str, str]) -> list[str]:
    with open_store(threads["store"]) as store:
        return [info.run_id for info in store.runs()]


def test_a_reference_needing_evaluator_is_refused_before_any_thread_runs(threads) -> None:
    out = sweep(threads, "redundancy", "step_efficiency", "tool_selection_accuracy")
    assert out.exit_code == INPUT_ERROR, out.output
    message = " ".join(out.output.split())
    assert "step_efficiency, tool_selection_accuracy need a reference" in message
    assert f"use a reference-free evaluator: {', '.join(reference_free_evaluators())}" in message
    assert stored_runs(threads) == []


def test_sweep_threads_refuses_it_with_a_typed_error(threads) -> None:
    graph = helpers.build()
    with pytest.raises(InvalidOptionError, match=r"evaluators: hitl_match needs a reference"):
        sweep_threads(graph, threads["checkpointer"], evaluators=["hitl_match"],
                      store=threads["store"])  # fmt: skip
    assert stored_runs(threads) == []


def test_the_reference_free_list_is_what_a_sweep_accepts(threads) -> None:
    """Every evaluator the refusal offers runs on the swept threads without erroring."""
    usable = [
        name
        for name in reference_free_evaluators()
        if name in {"json_valid", "reasoning_coherence", "redundancy", "source_citation"}
    ]
    assert usable == ["json_valid", "reasoning_coherence", "redundancy", "source_citation"]
    result = sweep_threads(helpers.build(), threads["checkpointer"], evaluators=usable,
                           store=threads["store"])  # fmt: skip
    assert result.counts.error == 0 and result.scored == 2


def test_incremental_sweeps_that_find_nothing_new_store_no_run(threads) -> None:
    first = sweep(threads, "redundancy")
    assert first.exit_code == PASSED, first.output
    assert len(stored_runs(threads)) == 1
    for _ in range(2):
        again = sweep(threads, "redundancy")
        assert again.exit_code == PASSED, again.output
        assert " ".join(again.output.split()) == (
            f"sweep {helpers.GRAPH}: none of the 2 threads that matched is new or changed "
            "since the last sweep; no run stored (--full scores them again)"
        )
    listed = runner.invoke(app, ["runs", "--store", threads["store"]])
    assert listed.exit_code == PASSED, listed.output
    assert listed.output.count("│ finished │") == 1  # one row in the table
    assert len(stored_runs(threads)) == 1


def test_a_sweep_with_nothing_new_returns_an_empty_unstored_result(threads) -> None:
    graph = helpers.build()
    sweep_threads(graph, threads["checkpointer"], store=threads["store"])
    again = sweep_threads(graph, threads["checkpointer"], store=threads["store"])
    assert (again.stored, again.scored, again.run.results) == (False, 0, [])
    assert again.info.status == "finished"
    assert again.info.run_id not in stored_runs(threads)
