"""A watch over a real SQLite file and a real Postgres database, with a writer process
creating and resuming travel-agent threads (:mod:`tests.sweeps.writer`).

Every test waits for the writer's reply before it polls, so a change is committed when the
watch looks; what a poll must do is then exact: score each thread whose run stopped since
the last poll, once, at the checkpoint where it stopped; leave a running one for later.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from lg_eval.errors import CheckpointerError, InvalidOptionError, RunInUseError
from lg_eval.experiments import open_store
from lg_eval.play import open_checkpointer
from lg_eval.sweeps import Watch, checkpoint_time
from tests import travel
from tests.sweeps.watching import GRAPH, POLICY, Writer, scored


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def threads_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the writer writes and the watch reads: a SQLite file, or a Postgres database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.sqlite'}"
    return str(request.getfixturevalue("pg_url"))


def _store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'results.sqlite'}"


def _watch(url: str, store: str, **options: Any) -> Watch:
    options.setdefault("idle", 3600.0)
    return Watch(GRAPH, url, store=store, name="travel", evaluators=[POLICY], **options)


def test_each_stop_is_scored_once_by_the_first_poll_after_it(
    threads_url: str, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    stops: list[tuple[str, str]] = []
    with _watch(threads_url, store) as watch, Writer(threads_url) as writer:
        first = watch.poll()
        assert (first.listed, first.seen, first.scored, first.result) == (True, 0, 0, None)

        stops += [("a", writer("new", "a")), ("b", writer("new", "b"))]
        paused = watch.poll()
        assert (paused.listed, paused.stopped, paused.scored) == (False, {"interrupted": 2}, 2)
        assert paused.result is not None
        assert {r.case_id: r.score_of("hitl_policy") for r in paused.result.run.results} == {
            "a": True,
            "b": True,
        }
        quiet = watch.poll()
        assert (quiet.listed, quiet.seen, quiet.scored, quiet.result) == (False, 0, 0, None)

        stops.append(("a", writer("approve", "a")))
        finished = watch.poll()
        assert (finished.stopped, finished.scored, finished.waiting) == ({"finished": 1}, 1, 0)

        running = writer("hold", "c")  # the run is inside its search tool
        for _ in range(2):  # looked at again, still running, not scored
            busy = watch.poll()
            assert (busy.seen, busy.waiting, busy.scored, busy.stopped) == (1, 1, 0, {})
        stops.append(("c", writer("release", "c")))
        assert checkpoint_time(stops[-1][1]) > checkpoint_time(running)
        done = watch.poll()
        assert (done.stopped, done.scored, done.waiting) == ({"interrupted": 1}, 1, 0)
    assert scored(store, "travel") == sorted(stops)


def test_a_restarted_watch_scores_what_changed_while_it_was_gone_and_nothing_twice(
    threads_url: str, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    with Writer(threads_url) as writer:
        stops = [("a", writer("new", "a")), ("b", writer("new", "b"))]
        with _watch(threads_url, store) as watch:
            assert watch.poll().stopped == {"interrupted": 2}
        stops += [("a", writer("approve", "a")), ("d", writer("new", "d"))]
        with _watch(threads_url, store) as again:
            caught_up = again.poll()
            assert caught_up.listed
            assert (caught_up.stopped, caught_up.scored) == ({"finished": 1, "interrupted": 1}, 2)
            assert again.poll().scored == 0
            stops.append(("b", writer("reject", "b")))
            assert again.poll().stopped == {"finished": 1}
    assert scored(store, "travel") == sorted(stops)


def test_a_run_still_going_is_scored_once_it_stays_idle(threads_url: str, tmp_path: Path) -> None:
    store = _store(tmp_path)
    clock = [0.0]
    watching = _watch(threads_url, store, idle=60.0, clock=lambda: clock[0])
    with Writer(threads_url) as writer, watching as watch:
        running = writer("hold", "c")
        clock[0] = checkpoint_time(running).timestamp() + 59.0
        assert (watch.poll().waiting, watch.poll().scored) == (1, 0)
        clock[0] += 1.0
        idle = watch.poll()
        assert (idle.stopped, idle.scored, idle.waiting) == ({"idle": 1}, 1, 0)
        assert watch.poll().scored == 0  # the same checkpoint: not again
        paused = writer("release", "c")
        assert watch.poll().stopped == {"interrupted": 1}
    assert scored(store, "travel") == sorted([("c", running), ("c", paused)])


def test_a_watch_lists_every_thread_again_after_reconcile_seconds(
    threads_url: str, tmp_path: Path
) -> None:
    clock = [1000.0]
    with Writer(threads_url) as writer:
        writer("new", "a")
        with _watch(threads_url, _store(tmp_path), reconcile=600.0, clock=lambda: clock[0]) as w:
            assert [w.poll().listed, w.poll().listed] == [True, False]
            clock[0] += 600.0
            again = w.poll()
            assert (again.listed, again.seen, again.scored) == (True, 0, 0)


def test_an_idle_sqlite_poll_reads_no_thread(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    with Writer(url) as writer:
        for name in ("a", "b", "c"):
            writer("new", name)
        with _watch(url, _store(tmp_path)) as watch:
            assert watch.poll().scored == 3
            feed = watch._source.changes  # type: ignore[union-attr]
            before = feed.queries
            for _ in range(5):
                assert watch.poll().seen == 0
            # per poll: the rows past the cursor (none), then the table's largest rowid
            assert feed.queries - before == 10


def test_a_deleted_newest_thread_makes_the_next_poll_list_every_thread(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    store = _store(tmp_path)
    with open_checkpointer(url) as saver:
        travel.play(travel.agent([], checkpointer=saver), "a", [travel.APPROVE])
        with _watch(url, store) as watch:
            assert watch.poll().scored == 1
            travel.play(travel.agent([], checkpointer=saver), "b", [travel.APPROVE])
            assert watch.poll().stopped == {"finished": 1}  # the cursor is past b's rows
            saver.delete_thread("b")  # its rowids are given again to the next rows
            travel.play(travel.agent([], checkpointer=saver), "c", [])  # fewer rows than b
            after = watch.poll()
            assert (after.listed, after.stopped) == (True, {"interrupted": 1})
    assert [thread for thread, _ in scored(store, "travel")] == ["a", "b", "c"]


def test_a_checkpointer_that_cannot_be_read_stops_the_look_with_a_typed_error(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    with _watch(url, _store(tmp_path)) as watch:
        assert watch.poll().listed
        with sqlite3.connect(tmp_path / "threads.sqlite") as other:
            other.execute("DROP TABLE checkpoints")
        with pytest.raises(CheckpointerError, match=r"The SQLite checkpointer could not be read "
                           r"\(OperationalError: no such table: checkpoints\)"):  # fmt: skip
            watch.poll()


def test_a_second_watch_of_the_same_sweep_is_refused_while_the_first_lives(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    store = _store(tmp_path)
    second = _watch(url, store)
    with _watch(url, store), pytest.raises(RunInUseError, match="Another watch of sweep"):
        second.__enter__()
    with _watch(url, store) as after:  # released when the first closed
        assert after.poll().listed


def test_bad_options_are_refused_before_anything_is_polled(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    store = _store(tmp_path)
    with pytest.raises(InvalidOptionError, match="idle=-1"):
        _watch(url, store, idle=-1)
    with pytest.raises(InvalidOptionError, match="No evaluator is registered as 'nope'"):
        Watch(GRAPH, url, store=store, evaluators=["nope"]).__enter__()
    with pytest.raises(InvalidOptionError, match="alerts: below='x'"):
        _watch(url, store, alerts=[{"key": "hitl_policy", "below": "x", "hook": "true"}])
    with open_store(store) as results:  # nothing was stored by the refused watches
        assert results.query("SELECT COUNT(*) FROM lg_eval_runs", ()) == [(0,)]
