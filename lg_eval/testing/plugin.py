"""The lg_eval pytest plugin: ``lg_eval_target`` and ``lg_eval_play`` fixtures.

Enabled by the ``pytest11`` entry point ``lg_eval`` (or ``-p lg_eval.testing.plugin``).
Name your graph once with the ini option ``lg_eval_target = module:attr`` (a
compiled graph, a ``StateGraph`` builder or a factory ``attr(checkpointer=saver)``),
or override the ``lg_eval_target`` fixture; ``lg_eval_checkpointer`` (default
``memory://``) says where the test threads are kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from lg_eval.testing._play import Player


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("lg_eval_target", "The graph lg_eval_play plays cases on (module:attr).")
    parser.addini(
        "lg_eval_checkpointer",
        "Checkpointer URL for lg_eval_play's threads (default memory://).",
        default="memory://",
    )


@pytest.fixture
def lg_eval_target(request: pytest.FixtureRequest) -> Any:
    """The graph under test: the ``lg_eval_target`` ini option, or override this fixture."""
    return request.config.getini("lg_eval_target") or None


@pytest.fixture
def lg_eval_play(request: pytest.FixtureRequest, lg_eval_target: Any) -> Player:
    """Play a case on a fresh thread of the graph: ``lg_eval_play(turns_or_case)``."""
    url = request.config.getini("lg_eval_checkpointer") or "memory://"
    return Player(target=lg_eval_target, checkpointer=url)
