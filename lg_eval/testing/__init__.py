"""pytest helpers: assertions with turn-by-turn diffs, a case-playing fixture, LangSmith feedback.

* :func:`assert_trajectory`, :func:`assert_tool_calls`, :func:`assert_hitl` raise
  ``AssertionError`` with a readable diff.
* The pytest plugin (:mod:`lg_eval.testing.plugin`, entry point ``lg_eval``) gives
  the ``lg_eval_play`` fixture: play a case's turns on a fresh thread of your graph.
* :func:`log_feedback` logs lg_eval feedback with ``langsmith.testing.log_feedback``
  inside a ``@pytest.mark.langsmith`` test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lg_eval._feedback import unusable_score
from lg_eval.errors import InvalidOptionError
from lg_eval.testing._asserts import (
    MODES,
    TrajectoryMode,
    assert_hitl,
    assert_tool_calls,
    assert_trajectory,
)
from lg_eval.testing._play import Played, Player


def log_feedback(feedback: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> None:
    """Log an lg_eval evaluator's feedback (one dict or a list) to the running LangSmith test.

    Call it inside a ``@pytest.mark.langsmith`` test; with
    ``LANGSMITH_TEST_TRACKING=false`` LangSmith skips it.

    Raises:
        InvalidOptionError: ``feedback`` is no feedback dict (or list of them) with a text
            ``key`` and a score that is ``None``, a bool or a finite number.
    """
    from langsmith import testing

    if isinstance(feedback, Mapping):
        items = [feedback]
    elif isinstance(feedback, str | bytes) or not isinstance(feedback, Iterable):
        raise InvalidOptionError(f"feedback={feedback!r:.80}: use a feedback dict or a list.")
    else:
        items = list(feedback)
    for index, item in enumerate(items):
        if not (isinstance(item, Mapping) and isinstance(item.get("key"), str)):
            raise InvalidOptionError(
                f"feedback[{index}]={item!r:.80}: use a feedback dict with a text 'key'."
            )
        if unusable_score(item.get("score")) is not None:
            raise InvalidOptionError(
                f"feedback[{index}] score={item.get('score')!r:.80}: use None, a bool or a "
                "finite number."
            )
    for item in items:
        extra = {"comment": item["comment"]} if item.get("comment") else {}
        testing.log_feedback(key=item["key"], score=item.get("score"), **extra)


__all__ = [
    "MODES",
    "Played",
    "Player",
    "TrajectoryMode",
    "assert_hitl",
    "assert_tool_calls",
    "assert_trajectory",
    "log_feedback",
]
