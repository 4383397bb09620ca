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


@pytest.mark.parametrize("name", list(EVERY_SCENARIO))
def test_every_scenario_extracts_what_ran(name: str, saver: Any) -> None:
    graph, live = record(EVERY_SCENARIO[name], saver)
    for reader in ("fast", "generic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExtractionWarning)
            check(extract_thread(graph, CONFIG, reader=reader), live)


@pytest.mark.parametrize("name", list(EVERY_SCENARIO))
async def test_every_scenario_extracts_what_ran_async(name: str, async_saver: Any) -> None:
    graph, live = await arecord(EVERY_SCENARIO[name], async_saver)
    for reader in ("fast", "generic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExtractionWarning)
            check(await aextract_thread(graph, CONFIG, reader=reader), live)
