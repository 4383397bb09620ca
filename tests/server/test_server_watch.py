"""A watch over a real ``langgraph dev`` serving the travel agent: each run that stops
(waiting at the booking's approval, finished) is scored once, by the first poll after it;
a busy thread waits for its run to end; a restarted watch scores only what changed."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from lg_eval.sweeps import Watch
from tests import travel
from tests.server.conftest import launched
from tests.server.travel_served import GATES
from tests.sweeps.watching import GRAPH, HANG, POLICY, scored

SERVED = str(Path(__file__).with_name("travel_served.py"))
REQUEST = {"messages": [{"role": "user", "content": travel.REQUEST}]}
APPROVE = {"resume": {"decisions": [{"type": "approve"}]}}


@pytest.fixture(scope="module")
def travel_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``langgraph dev`` serving ``travel``, and the folder of its runs' hold files."""
    gates = tmp_path_factory.mktemp("gates")
    home = tmp_path_factory.mktemp("travel-server")
    options = {"graphs": {"travel": f"{SERVED}:graph"}, "env": {GATES: str(gates)}}
    for url in launched(home, " (travel)", **options):
        yield url, gates


def _newest(client: Any, thread_id: str) -> str:
    return str(client.threads.get_state(thread_id)["checkpoint"]["checkpoint_id"])


def _run(client: Any, thread_id: str, **payload: Any) -> str:
    """One run to its end; the thread's newest checkpoint then."""
    client.runs.wait(thread_id, "travel", if_not_exists="create", **payload)
    return _newest(client, thread_id)


def _appears(path: Path) -> None:
    """Wait until the served run writes ``path`` (a guard, not a bound on its speed)."""
    deadline = time.monotonic() + HANG
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def test_a_watch_over_langgraph_dev_scores_each_stop_once(
    travel_server: tuple[str, Path], tmp_path: Path
) -> None:
    url, gates = travel_server
    client = get_sync_client(url=url)
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    batch = {"batch": uuid.uuid4().hex}  # this test's threads only
    a, b, c = (str(uuid.uuid4()) for _ in range(3))

    def watch() -> Watch:
        return Watch(GRAPH, server=url, metadata=batch, store=store, name="travel",
                     evaluators=[POLICY])  # fmt: skip

    stops = []
    with watch() as watching:
        assert (watching.poll().seen, watching.poll().listed) == (0, False)
        stops.append((a, _run(client, a, input=REQUEST, metadata=batch)))
        paused = watching.poll()
        assert (paused.stopped, paused.scored) == ({"interrupted": 1}, 1)
        assert paused.result is not None
        assert [r.score_of("hitl_policy") for r in paused.result.run.results] == [True]
        assert watching.poll().scored == 0
        stops.append((a, _run(client, a, command=APPROVE)))
        assert watching.poll().stopped == {"finished": 1}

        (gates / f"{b}.hold").touch()
        run = client.runs.create(b, "travel", input=REQUEST, metadata=batch, if_not_exists="create")
        _appears(gates / f"{b}.held")
        busy = watching.poll()
        assert (busy.seen, busy.waiting, busy.scored) == (1, 1, 0)
        (gates / f"{b}.go").touch()
        client.runs.join(b, run["run_id"])
        stops.append((b, _newest(client, b)))
        assert watching.poll().stopped == {"interrupted": 1}

    stops += [
        (b, _run(client, b, command=APPROVE)),
        (c, _run(client, c, input=REQUEST, metadata=batch)),
    ]
    with watch() as again:
        caught_up = again.poll()
        assert (caught_up.listed, caught_up.stopped) == (True, {"finished": 1, "interrupted": 1})
        assert again.poll().scored == 0
    assert scored(store, "travel") == sorted(stops)
