"""Extracting at an older checkpoint (a config's ``checkpoint_id``) with the fast reader gives
what the generic reader gives, at every root checkpoint of every example scenario.

Most such checkpoints are in the middle of a run: the last turn ends there although the
run went on, so the fast reader must read that checkpoint whole like one where a run
stopped (a sweep scoring a thread at a listed checkpoint id relies on it).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from graphs.scenarios import SCENARIOS
from lg_eval import ExtractionWarning, extract_thread


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_fast_reader_at_every_root_checkpoint_equals_generic(name: str, saver: Any) -> None:
    graph = SCENARIOS[name].played(saver)
    history = list(graph.get_state_history({"configurable": {"thread_id": "t"}}))
    differing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        for snapshot in history:
            config = {"configurable": {"thread_id": "t", **snapshot.config["configurable"]}}
            fast = extract_thread(graph, config, reader="fast").model_dump()
            if fast != extract_thread(graph, config, reader="generic").model_dump():
                differing.append(snapshot.metadata.get("step"))
    assert differing == []
