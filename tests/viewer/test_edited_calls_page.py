"""The case page lists each tool call as it ran, and a reviewer's edit with the model's call.

A real run of a ``create_agent`` whose reviewer edits one call, rejects one and approves
one (``tests.hitl_agents``) is written to a store and shown through the viewer's server.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lg_eval.datasets import load_dataset
from lg_eval.experiments import open_store, run_experiment
from lg_eval.viewer import ViewerServer
from tests import hitl_agents
from tests.hitl_agents import Log
from tests.reports.conftest import PAYLOAD, make_hostile_run
from tests.viewer.conftest import serve
from tests.viewer.test_pages import get, text


@pytest.fixture(scope="module")
def tidy_viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerServer]:
    here = tmp_path_factory.mktemp("tidy")
    dataset = here / "tidy.yaml"
    dataset.write_text(hitl_agents.tidy_dataset())
    log: Log = []
    run_experiment(
        functools.partial(hitl_agents.agent, log, mode="per_call"),
        load_dataset(dataset),
        checkpointer=f"sqlite:///{here / 'checkpoints.sqlite'}",
        store=f"sqlite:///{here / 'results.sqlite'}",
        run_id="tidy-1",
    )
    assert log == [
        ("write_file", {"path": "b.txt", "text": "hello"}),
        ("delete_file", {"path": "tmp.txt"}),
    ]
    yield from serve(here / "results.sqlite")


def test_the_case_page_shows_the_calls_as_they_ran(tidy_viewer: ViewerServer) -> None:
    status, _, html = get(tidy_viewer, "/case", run="tidy-1", id="tidy")
    assert status == 200
    calls = re.search(r'<ol class="tool-calls">(.*?)</ol>', html, re.S)
    assert calls is not None
    shown = [text(item) for item in re.findall(r"<li>(.*?)</li>", calls.group(1), re.S)]
    assert shown == [
        'write_file { "path": "b.txt", "text": "hello" } edited by the reviewer; proposed '
        'write_file { "path": "a.txt", "text": "hi" }',
        'delete_file proposed, not executed { "path": "report.txt" }',
        'delete_file { "path": "tmp.txt" }',
    ]


def test_a_hostile_proposal_is_escaped(tmp_path: Path) -> None:
    run = make_hostile_run()
    case = run.results[0]
    case.tool_calls = [
        {
            "name": "refund",
            "args": {},
            "id": "c1",
            "proposed": {"name": PAYLOAD, "args": {"x": PAYLOAD}},
        }
    ]
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        store.begin_run(run.info)
        store.write([(0, case)])
    for server in serve(path):
        _, _, html = get(server, "/case", run=run.info.run_id, id=case.case_id)
        calls = html[html.index('<ol class="tool-calls">') :]
        calls = calls[: calls.index("</ol>")]
        assert "<script" not in calls.lower() and "<img" not in calls.lower()
        assert calls.count("&lt;script&gt;document.title=&#39;PWNED&#39;;") == 2  # name, args
