"""Async twins derived from sync evaluators and factories (_base extensions)."""

from __future__ import annotations

import inspect

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    async_factory,
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
    make_evaluator,
    to_async,
)
from lg_eval.evaluators._base import Score


async def test_to_async_keeps_key_and_scorer():
    evaluator = make_evaluator("k", lambda *, outputs, **_: Score(outputs * 2))
    twin = to_async(evaluator)
    assert twin.__name__ == "k_async"
    assert await twin(outputs=2) == {"key": "k", "score": 4, "comment": None, "metadata": None}


def test_to_async_rejects_foreign_callables():
    with pytest.raises(InvalidOptionError, match="make_evaluator"):
        to_async(lambda **_: None)


def test_async_factory_keeps_the_signature_and_names_the_twin():
    assert create_async_trajectory_match_evaluator.__name__ == (
        "create_async_trajectory_match_evaluator"
    )
    assert inspect.signature(create_async_trajectory_match_evaluator).parameters.keys() == (
        inspect.signature(create_trajectory_match_evaluator).parameters.keys()
    )
    assert inspect.iscoroutinefunction(create_async_trajectory_match_evaluator())


def test_async_factory_validates_options_like_the_factory():
    create = async_factory(create_trajectory_match_evaluator)
    with pytest.raises(ValueError, match="trajectory_match_mode"):
        create(trajectory_match_mode="nope")
