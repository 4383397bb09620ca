"""The scoring process: the same results as scoring inline, chosen only when that is safe,
refused with the reason when asked for and impossible, and never outliving the run."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs import approval
from lg_eval import ExtractionWarning
from lg_eval._effects import drive
from lg_eval.datasets import dataset_from_dict
from lg_eval.errors import InvalidOptionError, ScoringProcessError
from lg_eval.evaluators import register_evaluator
from lg_eval.evaluators.registry import is_builtin
from lg_eval.experiments import arun_experiment, open_store, run_experiment
from lg_eval.experiments._case import CaseContext, plan_for, play_attempt
from lg_eval.experiments._scoring_choice import AUTO_MIN_CASES
from lg_eval.experiments._scoring_process import ScoringSpec, _Score, _Scorer
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.experiments.store import ResultStore
from lg_eval.play import open_checkpointer
from tests.experiments import crash_run
from tests.experiments.conftest import USER, ask, dataset
from tests.experiments.graphs import build_agent, build_echo

ROOT = Path(__file__).resolve().parents[2]

PAYMENT = [{"input": {"amount": 120}}, {"resume": "ops-card"}, {"resume": True}]


AGENT = {
    "trajectory": {"steps": [["__start__", "agent", "tools", "answer"]]},
    "tool_calls": [{"name": "lookup", "args": {"query": "answer"}}],
    "output": {"contains": ["42", "ask"]},
}
SCENARIOS: dict[str, tuple[Any, list[dict[str, Any]]]] = {
    "agent": (
        lambda: build_agent,
        [
            {"id": "builtins", "turns": USER, "expected": AGENT},
            {
                "id": "listed",
                "turns": USER,
                "expected": {**AGENT, "output": "the answer is 42; ask bob@example.com."},
                "evaluators": ["tool_selection_f1", "exact_match", "step_efficiency"],
            },
        ],
    ),
    "echo": (
        build_echo,  # a fresh call counter for each run
        [
            {"id": "right", "turns": ask("a"), "expected": {"output": "A"}},
            {"id": "wrong", "turns": ask("a"), "expected": {"output": "B"}},
            {"id": "boom", "turns": ask("x", fail="value"), "expected": {"output": "X"}},
            {"id": "retried", "turns": ask("db", fail="operational-once"),
             "expected": {"output": "DB"}},
            {"id": "no-reference", "turns": ask("a"), "evaluators": ["tool_sequence"]},
        ],
    ),
    "hitl": (
        lambda: approval.build_double_check,
        [
            {"id": "paid", "turns": PAYMENT, "expected": {"max_steps": 3}, "tags": ["hitl"]},
            {"id": "long", "turns": PAYMENT, "expected": {"max_steps": 2}},
            {"id": "unasked", "turns": [PAYMENT[0], {"input": {"amount": 1}}]},
            {"id": "half", "turns": PAYMENT[:2]},
        ],
    ),
}  # fmt: skip
STATUSES = {
    "agent": ["passed", "error"],  # step_efficiency cannot read a tool-call reference
    # no-reference: tool_sequence without expected tool calls gives no verdict (not called)
    "echo": ["passed", "failed", "error", "passed", "failed"],
    "hitl": ["passed", "failed", "error", "error"],
}


def essentials(run: Any) -> list[tuple[Any, ...]]:
    """Everything stored for a case except its run id, timings and interrupt ids (LangGraph
    derives those from checkpoint ids, which hold the time)."""
    return [
        (
            r.case_id, r.repetition, r.status, r.attempts, r.thread_id.partition(":")[2],
            r.trajectory, r.expected_trajectory, r.error, r.tokens, r.cost, r.model_calls,
            r.tags, [without_ids(t.model_dump()) for t in r.turns],
            [s.model_dump() for s in r.scores],
        )
        for r in run.results
    ]  # fmt: skip


def without_ids(turn: dict[str, Any]) -> dict[str, Any]:
    return {**turn, "asked": [{**a, "id": None} for a in turn["asked"]]}


def both(where: dict[str, Any], scenario: str, *, run: Any = run_experiment, **options: Any):
    """The scenario run inline and in the scoring process, each on a fresh target."""
    make_target, cases = SCENARIOS[scenario]
    data = dataset(scenario, cases)
    return [
        run(make_target(), data, run_id=f"{scenario}-{scoring}", scoring=scoring,
            **where, **options)
        for scoring in ("inline", "process")
    ]  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_run_scored_in_the_process_stores_what_an_inline_run_stores(where, scenario):
    inline, process = both(where, scenario, concurrency=3, redact=[r"bob@\S+"])
    assert (inline.info.config["scoring"], process.info.config["scoring"]) == (
        "inline",
        "process",
    )
    assert [r.status for r in process.results] == STATUSES[scenario]
    assert essentials(process) == essentials(inline)
    assert all(r.latency_s > 0 for r in process.results)
    with open_store(where["store"]) as store:
        assert store.load_run(process.info.run_id) == process


def test_the_process_redacts_and_retries_as_inline_does(where):
    (_, agent), (_, echo) = both(where, "agent", redact=[r"bob@\S+"]), both(where, "echo")
    assert "bob@example.com" not in agent.model_dump_json()
    retried = echo.results[3]
    assert (retried.attempts, retried.thread_id) == (2, "echo-process:retried:0:2")


ONE_BY_ONE = [
    {"input": {"request": "laptops"}},
    {"resume_by_node": {"legal_review": {"approved": True}}},
    {"resume_by_node": {"finance_review": {"approved": True}}},
]
"""Parallel interrupts answered one at a time: the extractor warns that storage cannot tell
how many resumes there were (``ExtractionWarning``)."""
AMBIGUOUS = "Turn 2 resumes 2 interrupts at once; the number of resumes is ambiguous"


def one_by_one(where: dict[str, Any], scoring: str) -> Any:
    data = dataset("one-by-one", [{"id": "reviews", "turns": ONE_BY_ONE,
                                   "expected": {"max_steps": 9}}])  # fmt: skip
    return run_experiment(approval.build, data, run_id=f"one-by-one-{scoring}", scoring=scoring,
                          **where)  # fmt: skip


@pytest.mark.parametrize("scoring", ["inline", "process"])
def test_warnings_raised_while_scoring_reach_the_caller(where, scoring):
    with pytest.warns(ExtractionWarning, match=AMBIGUOUS):
        run = one_by_one(where, scoring)
    assert run.info.config["scoring"] == scoring
    assert [r.status for r in run.results] == ["passed"]


def test_a_warning_turned_into_an_error_fails_the_case_in_either_scoring(where):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtractionWarning)
        inline, process = (one_by_one(where, scoring) for scoring in ("inline", "process"))
        outcomes = [(r.status, r.error) for run in (inline, process) for r in run.results]
    assert outcomes[0] == outcomes[1]
    status, error = outcomes[0]
    assert status == "error"
    assert error is not None and error.startswith(f"ExtractionWarning: {AMBIGUOUS}")


def test_the_process_commits_the_jobs_waiting_together_in_one_transaction(where, monkeypatch):
    """Jobs that wait while the process is busy (other workers' cases) are scored in turn
    and stored in one commit, and each is answered with its own status."""
    data = dataset("batched", [
        {"id": f"c{n}", "turns": ask(f"t{n}"), "expected": {"output": "T1"}} for n in range(3)
    ])  # fmt: skip
    target = build_echo()
    commits: list[list[str]] = []
    write = ResultStore.write

    def counted(store: ResultStore, results: Any) -> None:
        commits.append([result.case_id for _, result in results])
        write(store, results)

    monkeypatch.setattr(ResultStore, "write", counted)
    resolver = EvaluatorResolver(data)
    with open_checkpointer(where["checkpointer"]) as saver:
        context = CaseContext(
            run_id="batched", targets=CaseTargets(target, data, saver), saver=saver,
            thresholds={}, retries=1, redactor=None, resume_threads=False,
        )  # fmt: skip
        jobs = []
        for n, case in enumerate(data.cases):
            plan = plan_for(resolver, n, case, 0)
            graph = context.targets.for_case(case)
            played = drive(play_attempt(context, plan, graph, f"batched:c{n}:0:1", 1))
            jobs.append(_Score(n, 0, played, 0.01))
    spec = ScoringSpec(
        run_id="batched", target=target, dataset=data, checkpointer=where["checkpointer"],
        store=where["store"], thresholds={}, retries=1, redactor=None,
    )  # fmt: skip
    with _Scorer(spec) as scorer:
        replies = scorer.handle_warned(jobs)
    assert replies == [("failed", []), ("passed", []), ("failed", [])]
    assert commits == [["c0", "c1", "c2"]]
    with open_store(where["store"]) as store:
        assert sorted(store.finished("batched").items()) == [
            (("c0", 0), "failed"), (("c1", 0), "passed"), (("c2", 0), "failed"),
        ]  # fmt: skip


def test_postgres_runs_score_in_the_process_alike(pg_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    suffix = f"{os.getpid()}-{time.monotonic_ns()}"
    where = {"checkpointer": pg_url, "store": pg_url, "judge_cache": False}
    inline, process = (
        run_experiment(approval.build_double_check, dataset("hitl", SCENARIOS["hitl"][1]),
                       run_id=f"{scoring}-{suffix}", scoring=scoring, **where)
        for scoring in ("inline", "process")
    )  # fmt: skip
    assert process.info.config["scoring"] == "process"
    assert essentials(process) == essentials(inline)


def test_an_async_run_scores_in_the_process_alike(where):
    async def arun(*args: Any, **kwargs: Any) -> Any:
        return await arun_experiment(*args, **kwargs)

    def run(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(arun(*args, **kwargs))

    inline, process = both(where, "hitl", run=run)
    assert process.info.config["scoring"] == "process"
    assert essentials(process) == essentials(inline)


def enough(**case: Any) -> list[dict[str, Any]]:
    """As many cases as ``scoring="auto"`` starts the scoring process for."""
    return [
        {"id": f"c{n}", "turns": ask(f"w{n}"), "expected": {"output": f"W{n}"}, **case}
        for n in range(AUTO_MIN_CASES)
    ]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_auto_scores_in_the_process_when_nothing_stands_in_the_way(where, concurrency):
    run = run_experiment(build_echo(), dataset("e", enough()), concurrency=concurrency, **where)
    assert run.info.config["scoring"] == "process"
    assert {r.status for r in run.results} == {"passed"}


def test_auto_scores_a_small_run_inline(where):
    cases = enough()[1:]
    run = run_experiment(build_echo(), dataset("e", cases), **where)
    assert run.info.config["scoring"] == "inline"
    doubled = run_experiment(build_echo(), dataset("e", cases), repetitions=2, **where)
    assert doubled.info.config["scoring"] == "process"


OWN = "tests.experiments.test_scoring_process:answer_length"
REASONS = {
    "saver-object": "the checkpointer is a saver object; name it by URL",
    "memory-checkpointer": "a memory:// checkpointer lives in this process only",
    "store-object": "the store is an object; name it by URL or path",
    "timeout": "a run with a per-case timeout scores inline",
    "own-evaluator": f"evaluator {OWN!r} is not one of lg_eval's built-in evaluators",
    "replaced-builtin": "evaluator 'exact_match' is not one of lg_eval's built-in evaluators",
}


@contextlib.contextmanager
def ruled_out(where: dict[str, Any], change: str) -> Iterator[tuple[dict[str, Any], Any]]:
    """A run's options and dataset with one thing that keeps the scoring process out."""
    options: dict[str, Any] = dict(where)
    cases, code = enough(), False
    if change == "memory-checkpointer":
        options["checkpointer"] = "memory://"
    elif change == "timeout":
        options["timeout"] = 30.0
    elif change == "own-evaluator":
        cases, code = enough(evaluators=[OWN]), True
    elif change == "replaced-builtin":
        cases = enough(evaluators=["exact_match"])
    with contextlib.ExitStack() as stack:
        if change == "saver-object":
            options["checkpointer"] = stack.enter_context(open_checkpointer(where["checkpointer"]))
        elif change == "store-object":
            options["store"] = stack.enter_context(open_store(where["store"]))
        elif change == "another-thread":
            stop = threading.Event()
            threading.Thread(target=stop.wait, daemon=True).start()
            stack.callback(stop.set)
        elif change == "replaced-builtin":
            stack.enter_context(_exact_match_replaced())
        yield options, make(cases, code)


@pytest.mark.parametrize("change", [*REASONS, "another-thread"])
def test_auto_scores_inline_when_the_process_would_change_something(where, change):
    with ruled_out(where, change) as (options, data):
        run = run_experiment(build_echo(), data, **options)
    assert run.info.config["scoring"] == "inline"
    assert {r.status for r in run.results} == {"passed"}


@pytest.mark.parametrize("change", REASONS)
def test_asking_for_the_process_when_it_cannot_be_used_says_why(where, change):
    with ruled_out(where, change) as (options, data), pytest.raises(InvalidOptionError) as raised:
        run_experiment(build_echo(), data, scoring="process", **options)
    assert str(raised.value) == f"scoring='process' is not possible here: {REASONS[change]}."


def make(cases: list[dict[str, Any]], code: bool = False) -> Any:
    return dataset_from_dict({"name": "e", "cases": cases}, allows_code=code)


@contextlib.contextmanager
def _exact_match_replaced() -> Iterator[None]:
    from lg_eval.evaluators._catalog import BUILTINS

    register_evaluator("exact_match", lambda: lambda **_: True, replace=True)
    try:
        assert not is_builtin("exact_match")
        yield
    finally:
        register_evaluator("exact_match", BUILTINS["exact_match"], replace=True)
    assert is_builtin("exact_match")


def test_an_unknown_scoring_is_refused(where):
    with pytest.raises(InvalidOptionError) as raised:
        run_experiment(build_echo(), dataset("e", [{"id": "a", "turns": ask("a")}]),
                       scoring="threads", **where)  # fmt: skip
    assert str(raised.value) == "scoring='threads': use one of auto, process, inline."


def test_a_scoring_process_that_dies_stops_the_run_and_the_run_resumes(where):
    cases = [{"id": f"c{n}", "turns": ask(f"w{n}", delay=0.1), "expected": {"output": f"W{n}"}}
             for n in range(12)]  # fmt: skip
    data = dataset("e", cases)

    def kill_the_scorer(done: int, total: int, passed: int, failed: int) -> None:
        if done == 3:
            (scorer,) = multiprocessing.active_children()
            os.kill(scorer.pid, signal.SIGKILL)  # type: ignore[arg-type]

    with pytest.raises(ScoringProcessError) as raised:
        run_experiment(build_echo(), data, run_id="r", scoring="process", concurrency=2,
                       progress=kill_the_scorer, **where)  # fmt: skip
    assert str(raised.value).startswith("The scoring process exited (exit code -9)")
    # the cases given up finished before the run closed its checkpointer under them
    assert [t for t in threading.enumerate() if t.name == "lg_eval-case"] == []
    with open_store(where["store"]) as store:
        assert store.run_info("r").status == "interrupted"
        assert 3 <= len(store.finished("r")) < 12
    resumed = run_experiment(build_echo(), data, run_id="r", scoring="process", **where)
    assert [r.case_id for r in resumed.results] == [f"c{n}" for n in range(12)]
    assert {r.status for r in resumed.results} == {"passed"}


def test_the_scoring_process_dies_with_the_run(tmp_path):
    """kill -9 of the run's process also ends its scoring process at once (it never
    commits a result after the run died)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.experiments.crash_run", str(tmp_path), "r", "process"]
    run = subprocess.Popen(command, cwd=tmp_path, env=env)
    children = Path(f"/proc/{run.pid}/task/{run.pid}/children")
    deadline = time.monotonic() + 60
    scorer = ""
    while not scorer and time.monotonic() < deadline:
        scorer = children.read_text().strip() if children.exists() else ""
        time.sleep(0.01)
    assert scorer, "the run started no scoring process"
    run.kill()
    run.wait()
    deadline = time.monotonic() + 120  # the kernel ends it at once; this guards a hang only
    while Path(f"/proc/{scorer}").exists() and _alive(int(scorer)):
        assert time.monotonic() < deadline, "the scoring process outlived the run"
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped by init."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def test_the_crash_run_module_plays_on_the_scoring_process(tmp_path):
    crash_run.main(tmp_path, "r", "process")
    with open_store(tmp_path / "results.sqlite") as store:
        run = store.load_run("r")
    assert run.info.config["scoring"] == "process"
    assert [r.status for r in run.results].count("passed") == 40


def answer_length(*, outputs: Any, **_: Any) -> dict[str, Any]:
    """An evaluator of the tests' own (not a built-in)."""
    return {"key": "answer_length", "score": len(str(outputs["output"])) < 100}
