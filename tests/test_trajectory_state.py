"""``Turn.state`` is decoded on first access, and otherwise behaves like a field."""

from __future__ import annotations

import copy
import pickle

from lg_eval._trajectory import ThreadTrajectory, Turn


def _deferred(calls: list[int]) -> Turn:
    turn = Turn(index=0, kind="input", status="completed")

    def load() -> dict[str, int]:
        calls.append(1)
        return {"n": 1}

    turn.defer_state(load)
    return turn


def test_state_loads_once_on_first_access() -> None:
    calls: list[int] = []
    turn = _deferred(calls)
    assert calls == []
    assert turn.state == {"n": 1}
    assert turn.state == {"n": 1}
    assert calls == [1]


def test_deferred_and_given_state_compare_equal_and_dump_alike() -> None:
    given = Turn(index=0, kind="input", status="completed", state={"n": 1})
    deferred = _deferred([])
    assert deferred == given
    assert deferred.model_dump() == given.model_dump()
    assert deferred.model_dump()["state"] == {"n": 1}
    assert Turn(index=0, kind="input", status="completed", state={"n": 2}) != given


def test_state_survives_validation_copy_and_pickle() -> None:
    thread = ThreadTrajectory(thread_id="t", turns=[_deferred([])])
    again = ThreadTrajectory.model_validate_json(thread.model_dump_json())
    assert again.turns[0].state == {"n": 1}
    assert pickle.loads(pickle.dumps(_deferred([]))).state == {"n": 1}
    assert copy.deepcopy(_deferred([])).state == {"n": 1}
    assert _deferred([]).model_copy(update={"status": "error"}).state == {"n": 1}
