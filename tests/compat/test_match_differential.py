"""The drop-in trajectory match against the real agentevals 0.0.9 and openevals 0.2.2.

On generated trajectories in every accepted shape, under the argument rules where
the peers' first-fit pairing is right, each drop-in returns the peer's dict
exactly, in every mode, called or awaited.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agentevals.trajectory.match import (
    create_async_trajectory_match_evaluator as agentevals_async_match,
)
from agentevals.trajectory.match import create_trajectory_match_evaluator as agentevals_match
from hypothesis import HealthCheck, given, settings
from openevals.trajectory.match import (
    create_async_trajectory_match_evaluator as openevals_async_match,
)
from openevals.trajectory.match import create_trajectory_match_evaluator as openevals_match

from lg_eval.compat import agentevals, openevals
from tests.compat.trajectories import MODES, groups, rules, shaped, shapes

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PEERS = {
    "agentevals": (agentevals.create_trajectory_match_evaluator, agentevals_match),
    "openevals": (openevals.create_trajectory_match_evaluator, openevals_match),
}
ASYNC_PEERS = {
    "agentevals": (agentevals.create_async_trajectory_match_evaluator, agentevals_async_match),
    "openevals": (openevals.create_async_trajectory_match_evaluator, openevals_async_match),
}


def both(peer: str, mode: str, rule: dict[str, Any], outputs: Any, reference: Any) -> tuple:
    ours, theirs = PEERS[peer]
    return tuple(
        factory(trajectory_match_mode=mode, **rule)(outputs=outputs, reference_outputs=reference)
        for factory in (ours, theirs)
    )


@pytest.mark.parametrize("peer", sorted(PEERS))
@SETTINGS
@given(actual=groups, reference=groups, rule=rules, shape=shapes)
def test_each_name_returns_its_peers_dict(peer, actual, reference, rule, shape) -> None:
    outputs, expected = shaped(shape, actual), shaped(shape, reference)
    for mode in MODES:
        ours, theirs = both(peer, mode, rule, outputs, expected)
        assert ours == theirs, mode


@settings(SETTINGS, max_examples=40)
@given(groups, groups, rules, shapes)
def test_awaited_names_return_the_peers_dicts(actual, reference, rule, shape) -> None:
    outputs, expected = shaped(shape, actual), shaped(shape, reference)

    async def compare() -> None:
        for peer, (ours, theirs) in ASYNC_PEERS.items():
            for mode in MODES:
                mine = ours(trajectory_match_mode=mode, **rule)
                peers = theirs(trajectory_match_mode=mode, **rule)
                got = await mine(outputs=outputs, reference_outputs=expected)
                assert got == await peers(outputs=outputs, reference_outputs=expected), peer

    asyncio.run(compare())


@SETTINGS
@given(groups, shapes)
def test_a_trajectory_matches_itself_in_every_mode(calls, shape) -> None:
    outputs = shaped(shape, calls)
    for peer in PEERS:
        for mode in MODES:
            ours, theirs = both(peer, mode, {}, outputs, outputs)
            key = f"trajectory_{mode}_match"
            assert ours == theirs == {"key": key, "score": True, "comment": None, "metadata": None}
