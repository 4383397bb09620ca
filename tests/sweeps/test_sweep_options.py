"""``lg-eval sweep --evaluator NAME:K=V,...``: the evaluators the refusal recommends can be
configured from the command line (typed, checked before any thread is listed), and a sweep
that stores nothing says whether no thread matched or none changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.cli._options import evaluator_specs
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import open_store
from lg_eval.sweeps import sweep_threads
from tests.sweeps import helpers

runner = CliRunner()


def sweep(threads: dict[str, str], *args: str) -> Any:
    return runner.invoke(
        app,
        ["sweep", "--graph", helpers.GRAPH, "--checkpointer", threads["checkpointer"],
         "--store", threads["store"], "--quiet", *args],
    )  # fmt: skip


def stored(threads: dict[str, str]) -> list[tuple[str, list[tuple[str, Any]]]]:
    with open_store(threads["store"]) as store:
        return [
            (r.case_id, [(row.key, row.score) for row in r.scores])
            for info in store.runs()
            for r in store.load_run(info.run_id).results
        ]


def test_an_option_from_the_command_line_reaches_the_evaluator(threads) -> None:
    out = sweep(threads, "--evaluator", "call_budget:max_tool_calls=0", "--evaluator",
                "keywords:keywords=[sunny, rain],mode=any")  # fmt: skip
    assert out.exit_code == 0, out.output
    rows = stored(threads)
    assert len(rows) == 2
    assert all(scores == [("call_budget", 0.0), ("keywords", 1.0)] for _, scores in rows)
    with open_store(threads["store"]) as store:
        (info,) = store.runs()
    assert info.config["evaluators"] == [
        {"name": "call_budget", "options": {"max_tool_calls": 0}},
        {"name": "keywords", "options": {"keywords": ["sunny", "rain"], "mode": "any"}},
    ]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            "call_budget:max_tool_call=2",
            "lg-eval: Evaluator 'call_budget' does not take these options (got an unexpected "
            "keyword argument 'max_tool_call'); it accepts: max_tool_calls, max_model_calls, "
            "max_tokens, max_cost, input_token_price, output_token_price.",
        ),
        ("call_budget:max_tool_calls=-1", "lg-eval: max_tool_calls=-1 must be a number >= 0, "
         "and finite."),
        ("call_budget:max_tool_calls=[2", "lg-eval: --evaluator 'call_budget:max_tool_calls=[2': "
         "an unclosed quote or bracket in its options"),
        ("call_budget:max_tool_calls=2,max_tool_calls=3", "lg-eval: --evaluator "
         "'call_budget:max_tool_calls=2,max_tool_calls=3': option 'max_tool_calls' is given "
         "twice"),
    ],
    ids=["name", "value", "bracket", "twice"],
)  # fmt: skip
def test_a_bad_option_is_one_line_exit_2_and_no_run(threads, given: str, message: str) -> None:
    out = sweep(threads, "--evaluator", given)
    assert out.exit_code == 2
    assert out.stderr.splitlines() == [message]
    assert not Path(threads["store"].removeprefix("sqlite:///")).exists()


def test_a_name_with_options_is_not_refused_as_needing_a_reference(threads) -> None:
    out = sweep(threads, "--evaluator", "keywords")
    assert out.exit_code == 2
    assert "--evaluator keywords:keywords=[refund]" in " ".join(out.stderr.split())
    assert sweep(threads, "--evaluator", "keywords:keywords=[sunny]").exit_code == 0


def test_the_python_api_takes_the_dataset_form(threads) -> None:
    result = sweep_threads(
        helpers.build(), threads["checkpointer"], store=threads["store"],
        evaluators={"name": "call_budget", "options": {"max_tool_calls": 5}},
    )  # fmt: skip
    assert [e.key for e in result.evaluators] == ["call_budget"]
    assert result.counts.passed == 2
    with pytest.raises(InvalidOptionError, match="a dict is"):
        sweep_threads(helpers.build(), threads["checkpointer"], store=threads["store"],
                      evaluators=[{"name": "call_budget", "option": {}}])  # fmt: skip


@given(st.integers(0, 10**6), st.booleans(), st.lists(st.sampled_from("abc xyz"), max_size=3))
def test_values_are_typed_as_yaml(number: int, flag: bool, words: list[str]) -> None:
    listed = "[" + ", ".join(f"'{w}'" for w in words) + "]"
    item = f"mod.x:factory:n={number},flag={str(flag).lower()},words={listed}"
    assert evaluator_specs([item]) == [
        {"name": "mod.x:factory", "options": {"n": number, "flag": flag, "words": words}}
    ]
    assert evaluator_specs(["mod.x:factory"]) == ["mod.x:factory"]  # a reference, no options


def test_no_thread_matching_is_not_the_same_as_nothing_new(threads) -> None:
    none = sweep(threads, "--metadata", "team=nobody")
    assert none.exit_code == 0
    assert none.stdout.splitlines() == [
        f"sweep {helpers.GRAPH}: no thread matched the filters (--metadata); no run stored"
    ]
    assert sweep(threads).exit_code == 0
    again = sweep(threads)
    assert again.stdout.splitlines() == [
        f"sweep {helpers.GRAPH}: none of the 2 threads that matched is new or changed since "
        "the last sweep; no run stored (--full scores them again)"
    ]
    assert again.stderr == ""
