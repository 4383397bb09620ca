"""Every scenario's extracted trajectory against what LangGraph streamed while it ran
(see :mod:`tests.extract.live`), on every saver, sync and async, through both readers."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from graphs.scenarios import EVERY_SCENARIO
from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from tests.extract.live import arecord, check, record

CONFIG = {"configurable": {"thread_id": "t"}}


KNOWN_GAPS: dict[str, str] = {}
"""Scenarios not read exactly yet (name -> why), run as strict xfails."""


def cases() -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True))
        if name in KNOWN_GAPS
        else name
        for name in EVERY_SCENARIO
    ]


def kept(name: str, live: list[Any]) -> list[Any]:
    """The live turns on the newest lineage (time travel abandons some)."""
    abandoned = EVERY_SCENARIO[name].abandoned
    return [turn for index, turn in enumerate(live) if index not in abandoned]


@pytest.mark.parametrize("name", cases())
def test_every_scenario_extracts_what_ran(name: str, saver: Any) -> None:
    if not EVERY_SCENARIO[name].exact:
        pytest.skip("checkpoints cannot tell this thread's turns apart (it warns instead)")
    graph, live = record(EVERY_SCENARIO[name], saver)
    for reader in ("fast", "generic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExtractionWarning)
            check(extract_thread(graph, CONFIG, reader=reader), kept(name, live))


@pytest.mark.parametrize("name", cases())
async def test_every_scenario_extracts_what_ran_async(name: str, async_saver: Any) -> None:
    if not EVERY_SCENARIO[name].exact:
        pytest.skip("checkpoints cannot tell this thread's turns apart (it warns instead)")
    graph, live = await arecord(EVERY_SCENARIO[name], async_saver)
    for reader in ("fast", "generic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExtractionWarning)
            check(await aextract_thread(graph, CONFIG, reader=reader), kept(name, live))
