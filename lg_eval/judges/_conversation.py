"""Conversation judges: presets of the rubric judge that grade a whole conversation thread.

A simulated user (or a scripted one) leaves a thread of several turns; these judges read
that thread (``outputs``, any trajectory shape the rubric judge takes) with a prompt that
explains a conversation's turns, and grade one dimension each on a 1-5 scale:

* :func:`create_goal_completion_judge` (``goal_completion``): did the user get what they
  came for;
* :func:`create_user_frustration_judge` (``user_frustration``): how free of frustration the
  user stays (1.0: none; a user who gives up scores 0.0);
* :func:`create_knowledge_retention_judge` (``knowledge_retention``): does the agent keep
  what it was told in earlier turns.

Each returns the rubric judge's feedback: the normalized score (0..1) under its key, then
the raw 1-5 score under ``<key>.<dimension>``. Higher is better for all three, so the one
verdict rule (a score passes at or above its threshold) reads them alike.
"""

from __future__ import annotations

from typing import Any, Unpack

from lg_eval._evaluator import Evaluator
from lg_eval._feedback import FeedbackDict
from lg_eval.judges import _prompts as prompts
from lg_eval.judges._options import JudgeOptions
from lg_eval.judges._rubric import RubricDimension, create_rubric_judge

GOAL_COMPLETION = "goal_completion"
USER_FRUSTRATION = "user_frustration"
KNOWLEDGE_RETENTION = "knowledge_retention"


def conversation_dimension(key: str) -> RubricDimension:
    """The one rubric dimension of the conversation judge ``key``."""
    name, description, levels = prompts.CONVERSATION_DIMENSIONS[key]
    return RubricDimension(name=name, description=description, levels=levels)


def _preset(key: str, options: dict[str, Any]) -> Evaluator[list[FeedbackDict]]:
    return create_rubric_judge(
        dimensions=[conversation_dimension(key)],
        prompt=prompts.CONVERSATION_RUBRIC_PROMPT,
        feedback_key=key,
        **options,
    )


def create_goal_completion_judge(
    **options: Unpack[JudgeOptions],
) -> Evaluator[list[FeedbackDict]]:
    """Grade how fully the agent got the user what they came for (``goal_completion``).
    Takes the rubric judge's options (:func:`~lg_eval.judges.create_rubric_judge`)."""
    return _preset(GOAL_COMPLETION, dict(options))


def create_user_frustration_judge(
    **options: Unpack[JudgeOptions],
) -> Evaluator[list[FeedbackDict]]:
    """Grade how free of frustration the user stays (``user_frustration``: 1.0 none, 0.0
    exasperated or given up). Takes the rubric judge's options."""
    return _preset(USER_FRUSTRATION, dict(options))


def create_knowledge_retention_judge(
    **options: Unpack[JudgeOptions],
) -> Evaluator[list[FeedbackDict]]:
    """Grade how well the agent keeps what the user said in earlier turns
    (``knowledge_retention``). Takes the rubric judge's options."""
    return _preset(KNOWLEDGE_RETENTION, dict(options))
