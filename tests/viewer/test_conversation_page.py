"""A simulated conversation on the viewer's case page, in a real browser (Playwright
driving Debian's chromium): each turn marked with who wrote it (the scripted first input,
the simulated user, the reviewer), the agent's replies between them, and why the
conversation ended with what the simulated user cost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from lg_eval.datasets import dataset_from_dict
from lg_eval.experiments import run_experiment
from lg_eval.play import SimulatedReviewer
from lg_eval.viewer import ViewerServer
from tests.judges.fake_judge import ScriptedJudge
from tests.play.support import ASK_ORDER, DONE
from tests.viewer.conftest import serve
from tests.viewer.test_browser import artifacts, browser, open_page

__all__ = ["artifacts", "browser"]  # the browser test's fixtures, used here too


@pytest.fixture(scope="module")
def conversation_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run: the approving support agent, its first input scripted, the user simulated,
    the approval answered by the reviewer."""
    here = tmp_path_factory.mktemp("conversation")
    user = {
        "persona": "a customer whose blender arrived broken",
        "goal": "a refund for order 42",
        "model": "tests.play.support:customer_model",
        "first_input": "Hi, I want a refund for my blender.",
        "interrupts": {"approve": "reviewer"},
    }
    data = dataset_from_dict(
        {"name": "support", "cases": [{"id": "approved-refund", "user": user}]}, allows_code=True
    )
    reviewer = SimulatedReviewer(ScriptedJudge.of(AIMessage("yes, approved")), persona="a lead")
    run_experiment(
        "tests.play.support:approving",
        data,
        checkpointer="memory://",
        store=here / "results.sqlite",
        run_id="sim-1",
        reviewer=reviewer,
        judge_cache=False,
    )
    return here / "results.sqlite"


@pytest.fixture
def conversation_viewer(conversation_store: Path) -> Iterator[ViewerServer]:
    yield from serve(conversation_store)


def test_the_case_page_marks_each_speaker_of_a_simulated_conversation(
    browser: Any, conversation_viewer: ViewerServer, artifacts: Path
) -> None:
    requests: list[str] = []
    page = open_page(browser, requests)
    page.goto(f"{conversation_viewer.url}/case?run=sim-1&id=approved-refund")
    assert page.locator("#case-id").inner_text() == "approved-refund"
    speakers = page.locator(".conversation .bubble.human .speaker").all_inner_texts()
    assert speakers == ["script", "simulated user", "simulated user", "reviewer"]
    assert page.locator(".bubble.human").evaluate_all("els => els.map(e => e.dataset.by)") == [
        "script", "user", "user", "reviewer"
    ]  # fmt: skip
    replies = page.locator(".bubble.reply pre").all_inner_texts()
    assert replies == [
        ASK_ORDER,
        "Why would you like a refund for order 42?",
        DONE.format(order="42"),
    ]
    sent = page.locator(".bubble.by-reviewer pre").inner_text()
    assert sent == "yes, approved"
    asked = page.locator(".bubble.graph:not(.reply) pre").all_inner_texts()
    assert asked == ['{\n  "question": "Approve a refund for order 42?"\n}']  # indented
    summary = page.locator("#simulation").inner_text()
    assert summary == (
        "Simulated user: 2 turns · ended: the user said it was done "
        "(Thanks, that's all I needed.) · simulator: 3 calls, 174 tokens, –, "
        + summary.rsplit(", ", 1)[1]
    )
    # the user's bubbles are green, the reviewer's violet: told apart at a glance
    colors = page.locator(".bubble.human").evaluate_all(
        "els => els.map(e => getComputedStyle(e).backgroundColor)"
    )
    assert colors[1] == colors[2] != colors[3] != colors[0]
    page.screenshot(path=artifacts / "viewer-conversation.png", full_page=True)
    assert {request.split("/")[2] for request in requests} == {
        conversation_viewer.url.split("/")[2]
    }
