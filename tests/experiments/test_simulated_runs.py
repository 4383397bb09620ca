"""Simulated conversations through the runner: stored with who wrote each turn, judged
as conversations, repeated into pass^k, and resumed after a ``kill -9`` without asking
the user's model (or running the agent) again for a finished turn."""

from __future__ import annotations

import multiprocessing
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from lg_eval.datasets import dataset_from_dict
from lg_eval.experiments import open_store, pass_hat_k, run_experiment
from lg_eval.play import SimulatedReviewer
from tests.experiments import simulated_run
from tests.experiments.graphs import starts
from tests.judges.fake_judge import ScriptedJudge
from tests.play.support import ASK_ORDER, DONE, FRUSTRATION_MODEL, REFUSAL

USER = {"persona": "a customer whose blender arrived broken", "goal": "a refund for order 42"}


def store_url(folder: Path) -> dict[str, str]:
    return {"checkpointer": "memory://", "store": f"sqlite:///{folder / 'results.sqlite'}"}


def test_conversations_are_stored_with_their_speakers_judged_and_repeated_into_pass_hat_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two repetitions of a conversation the agent serves and one it does not: each turn
    is stored with who wrote it and the agent's reply; the user's calls are counted apart
    from the agent's and the judge's tokens; the frustration judge reads the user's last
    words; pass^k holds for the served user only."""
    monkeypatch.chdir(tmp_path)
    data = dataset_from_dict(
        {
            "name": "support",
            "graph": "tests.play.support:build",
            "evaluators": ["tests.play.support:frustration"],
            "cases": [
                {"id": "served", "user": {**USER, "model": "tests.play.support:customer_model"}},
                {
                    "id": "refused",
                    "graph": "tests.play.support:stubborn",
                    "user": {**USER, "model": "tests.play.support:quitter_model"},
                },
            ],
        },
        allows_code=True,
    )
    calls_before = len(FRUSTRATION_MODEL.calls)
    run = run_experiment(None, data, repetitions=2, concurrency=1, **store_url(tmp_path))
    by_case = {(r.case_id, r.repetition): r for r in run.results}
    served, refused = by_case["served", 1], by_case["refused", 0]
    assert [(t.by, t.reply) for t in served.turns] == [
        ("user", ASK_ORDER),
        ("user", "Why would you like a refund for order 42?"),
        ("user", DONE.format(order="42")),
    ]
    assert served.simulation is not None and refused.simulation is not None
    assert served.simulation.model_dump(exclude={"latency_s"}) == {
        "stop": "user", "detail": "Thanks, that's all I needed.", "user_turns": 3, "calls": 4,
        "tokens": 232, "cost": None,
    }  # fmt: skip
    assert (refused.simulation.stop, refused.simulation.detail, refused.simulation.calls) == (
        "user",
        "This is useless, I give up.",
        3,
    )
    # the agent's replies (30 tokens each) and the judge's call (120; none on a repetition
    # whose verdict is cached): never the user's
    assert (by_case["served", 0].tokens, served.tokens) == (4 * 30 + 120, 4 * 30)
    assert refused.tokens == 2 * 30 + 120
    assert [(r.case_id, r.status, r.score_of("user_frustration")) for r in run.results] == [
        ("served", "passed", 1.0),
        ("served", "passed", 1.0),
        ("refused", "failed", 0.0),
        ("refused", "failed", 0.0),
    ]
    judged = FRUSTRATION_MODEL.calls[calls_before:]
    assert len(judged) == 2  # one per case: the second repetition's verdict is cached
    refusal_prompt = next(call.prompt for call in judged if REFUSAL in call.prompt)
    assert '"last_words": "This is useless, I give up."' in refusal_prompt
    assert '"goal": "a refund for order 42"' in refusal_prompt
    assert '<conversation>\n<turn number="1" kind="input"' in refusal_prompt
    assert pass_hat_k(run) == {"served": True, "refused": False}
    with open_store(tmp_path / "results.sqlite") as store:
        assert store.load_run(run.info.run_id).results == run.results


def test_the_reviewer_answers_in_the_middle_of_a_run_conversation(tmp_path: Path) -> None:
    data = dataset_from_dict(
        {
            "name": "approvals",
            "cases": [
                {
                    "id": "approved",
                    "user": {
                        **USER,
                        "model": "tests.play.support:customer_model",
                        "interrupts": {"approve": "reviewer"},
                        "stop": {"tool_call": "refund"},
                    },
                    "expected": {"tool_calls": ["refund"]},
                }
            ],
        },
        allows_code=True,
    )
    reviewer = SimulatedReviewer(ScriptedJudge.of(AIMessage("yes")), persona="a support lead")
    run = run_experiment(
        "tests.play.support:approving", data, reviewer=reviewer, **store_url(tmp_path)
    )
    (result,) = run.results
    assert [(t.kind, t.by, t.sent) for t in result.turns][2:] == [
        ("input", "user", {"messages": [{"role": "user", "content": "It arrived broken."}]}),
        ("resume", "reviewer", "yes"),
    ]
    assert result.simulation is not None
    assert (result.simulation.stop, result.simulation.user_turns) == ("tool_call", 3)
    assert result.trajectory == [
        ["__start__", "agent"],
        ["__start__", "agent"],
        ["__start__", "agent", "approve", "__interrupt__"],
        ["tools", "agent"],  # the resumed node is not repeated (resumed="omit")
    ]
    assert result.status == "passed"


def every_call_once() -> Counter[str]:
    """The calls of an undisturbed run: per case, the agent on each user message (twice on
    the last: the refund call, then the confirmation), the tool once; four user calls."""
    calls: Counter[str] = Counter()
    for case in simulated_run.CASES:
        for said in ("Hi, I want a refund for my blender.", "It's order 42.", "It arrived broken."):
            calls[f"agent:{case}:{said}"] += 1
        calls[f"agent:{case}:It arrived broken."] += 1
        calls[f"tools:{case}:It arrived broken."] += 1
        for heard in ("", ASK_ORDER, "Why would you like a refund for order 42?"):
            calls[f"user:{heard}"] += 1
        calls[f"user:{DONE.format(order='42')}"] += 1
    return calls


def essentials(folder: Path, run_id: str) -> list[tuple[Any, ...]]:
    """What a killed-then-resumed run must share with an undisturbed one."""
    with open_store(folder / "results.sqlite") as store:
        run = store.load_run(run_id)
    return [
        (
            r.case_id,
            r.status,
            r.trajectory,
            [(t.index, t.kind, t.by, t.sent, t.reply, t.error) for t in r.turns],
            None if r.simulation is None else r.simulation.model_dump(exclude={"latency_s"}),
            r.tokens,
        )
        for r in run.results
    ]


@pytest.mark.parametrize("where", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_conversation_killed_inside_a_turn_resumes_without_replaying_finished_turns(
    tmp_path: Path, request: pytest.FixtureRequest, where: str
) -> None:
    """kill -9 in the refund tool of chat-1's third user turn (a real process, a real
    signal): the resumed run asks the user's model nothing it asked before and sends no
    finished turn again; the cut turn is sent again as the user wrote it (its agent and
    tool calls run twice, nothing else); the results equal an undisturbed run's."""
    clean = tmp_path / "clean"
    clean.mkdir()
    simulated_run.main(clean, "clean", f"sqlite:///{clean / 'checkpoints.sqlite'}")
    assert starts(clean / "calls.log") == every_call_once()

    killed = tmp_path / "killed"
    killed.mkdir()
    url = f"sqlite:///{killed / 'checkpoints.sqlite'}"
    if where == "postgres":
        request.getfixturevalue("postgres_saver")  # empties the shared tables
        url = request.getfixturevalue("pg_dsn")
    kill = ("chat-1", "tools", "It arrived broken.")
    process = multiprocessing.get_context("fork").Process(
        target=simulated_run.main, args=(killed, "r1", url, kill)
    )
    process.start()
    process.join(120)
    assert process.exitcode == -signal.SIGKILL
    with open_store(killed / "results.sqlite") as store:
        assert [r.case_id for r in store.load_run("r1").results] == ["chat-0"]
    simulated_run.main(killed, "r1", url)
    extra = starts(killed / "calls.log") - every_call_once()
    assert extra == Counter(
        {"agent:chat-1:It arrived broken.": 1, "tools:chat-1:It arrived broken.": 1}
    )
    assert essentials(killed, "r1") == essentials(clean, "clean")
