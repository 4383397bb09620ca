"""A simulated user through ``langchain-openai``'s ``ChatOpenAI`` and HTTP, against a
chat-completions server on 127.0.0.1 (:mod:`tests.judges.openai_server`): the requests
the user's model makes are the ones a real provider would get, seed and all, and nothing
leaves the machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lg_eval.datasets import dataset_from_dict
from lg_eval.experiments import run_experiment
from tests.judges.openai_server import ChatServer, loopback_only, tool_answer, usage
from tests.play.support import ASK_ORDER, DONE, USER_URL_ENV

SAYS = [
    ("Hi, I want a refund for my blender.", False),
    ("It's order 42.", False),
    ("It arrived broken.", False),
    ("Thanks, that's all I needed.", True),
]


def replies() -> list[object]:
    return [
        tool_answer(
            "user_turn",
            json.dumps({"message": message, "done": done}),
            model="gpt-4o-mini",
            tokens=usage(40, 9, cost=0.0005),
        )
        for message, done in SAYS
    ]


def test_a_three_turn_conversation_through_chat_openai_is_seeded_per_repetition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two repetitions of the support conversation, the user's model a ``ChatOpenAI`` on
    the loopback server: each request forces the ``user_turn`` tool, carries the case's
    seed plus the repetition's number, and shows the agent's words fenced; the user's
    tokens and cost (from the provider's usage) are the simulation's, apart from the
    agent's."""
    monkeypatch.chdir(tmp_path)
    data = dataset_from_dict(
        {
            "name": "support",
            "graph": "tests.play.support:build",
            "cases": [
                {
                    "id": "refund",
                    "user": {
                        "persona": "a customer whose blender arrived broken",
                        "goal": "a refund for order 42",
                        "model": "tests.play.support:openai_user",
                        "seed": 7,
                    },
                }
            ],
        },
        allows_code=True,
    )
    with ChatServer([*replies(), *replies()]) as server, loopback_only():
        monkeypatch.setenv(USER_URL_ENV, server.base_url)
        run = run_experiment(
            None,
            data,
            repetitions=2,
            concurrency=1,
            checkpointer="memory://",
            store=tmp_path / "results.sqlite",
        )
    bodies = server.bodies
    assert [body["seed"] for body in bodies] == [7] * 4 + [8] * 4
    assert {json.dumps(body["tool_choice"]) for body in bodies} == {
        '{"type": "function", "function": {"name": "user_turn"}}'
    }
    assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == ["user_turn"]
    system, human = bodies[3]["messages"]
    assert system["role"] == "system"
    assert "Who you are: a customer whose blender arrived broken" in system["content"]
    assert human == {
        "role": "user",
        "content": "<conversation>\n"
        "<you>\nHi, I want a refund for my blender.\n</you>\n"
        f"<agent>\n{ASK_ORDER}\n</agent>\n"
        "<you>\nIt's order 42.\n</you>\n"
        "<agent>\nWhy would you like a refund for order 42?\n</agent>\n"
        "<you>\nIt arrived broken.\n</you>\n"
        f"<agent>\n{DONE.format(order='42')}\n</agent>\n"
        "</conversation>\n\nThe agent waits for your next message.",
    }
    for result in run.results:
        assert [(t.by, t.sent["messages"][0]["content"]) for t in result.turns] == [
            ("user", message) for message, _ in SAYS[:3]
        ]
        assert result.simulation is not None
        assert result.simulation.model_dump(exclude={"latency_s"}) == {
            "stop": "user", "detail": "Thanks, that's all I needed.", "user_turns": 3,
            "calls": 4, "tokens": 4 * 49, "cost": pytest.approx(4 * 0.0005),
        }  # fmt: skip
        assert result.tokens == 4 * 30  # the agent's replies only
