"""The message trajectory judge: were the agent's messages and tool calls sensible?"""

from __future__ import annotations

from typing import Any, Unpack

from lg_eval._effects import Core
from lg_eval._evaluator import Evaluator, Scorer, async_twin, make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.judges._core import Judge
from lg_eval.judges._options import JudgeOptions, prompt_judge
from lg_eval.judges._prompting import Prompt
from lg_eval.judges._prompts import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)
from lg_eval.messages import to_openai_messages

TRAJECTORY_KEY = "trajectory_accuracy"


def _scorer(prompt: Prompt | None, judge: Judge) -> Scorer:
    def trajectory_accuracy(
        *, outputs: Any, inputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Core[Feedback]:
        """Judge whether an agent's message trajectory was sensible."""
        messages = to_openai_messages(outputs, argument="outputs")
        reference = (
            to_openai_messages(reference_outputs, argument="reference_outputs")
            if reference_outputs
            else None
        )
        values, rendered = judge.render(inputs=inputs, outputs=messages, reference=reference)
        chosen = prompt
        if chosen is None:
            chosen = (
                TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE
                if reference
                else (TRAJECTORY_ACCURACY_PROMPT)
            )
        score: Feedback = yield from judge.evaluate(chosen, {**values, **kwargs}, rendered)
        return score

    return trajectory_accuracy


def create_trajectory_llm_as_judge(
    *,
    prompt: Prompt | None = None,
    feedback_key: str = TRAJECTORY_KEY,
    **options: Unpack[JudgeOptions],
) -> Evaluator:
    """An LLM judge of an agent's message trajectory (feedback key ``trajectory_accuracy``).

    Call the evaluator with ``outputs=`` the messages (LangChain messages, OpenAI
    dicts, a state dict with ``"messages"``, or a :class:`~lg_eval.ThreadTrajectory`),
    optionally ``reference_outputs=`` in the same shapes and ``inputs=``. Without a
    ``prompt`` the judge uses :data:`TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE` when a
    reference is given and :data:`TRAJECTORY_ACCURACY_PROMPT` otherwise. See
    :class:`JudgeOptions` for options.
    """
    judge = prompt_judge(prompt, options)
    return make_evaluator(
        feedback_key, _scorer(prompt, judge), reads="messages", score_range=judge.spec.score_range
    )


create_async_trajectory_llm_as_judge = async_twin(create_trajectory_llm_as_judge)
