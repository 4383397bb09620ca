"""The graph trajectory judge: was the route through the graph, turn by turn, sensible?"""

from __future__ import annotations

from typing import Any, Unpack

from lg_eval._effects import Core
from lg_eval._evaluator import Evaluator, Scorer, async_twin, make_evaluator
from lg_eval._feedback import Feedback
from lg_eval._inputs import graph_trajectory
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.judges._core import Judge
from lg_eval.judges._options import JudgeOptions, prompt_judge
from lg_eval.judges._prompting import Prompt
from lg_eval.judges._prompts import GRAPH_REFERENCE_BLOCK, GRAPH_TRAJECTORY_ACCURACY_PROMPT

GRAPH_TRAJECTORY_KEY = "graph_trajectory_accuracy"


def _scorer(prompt: Prompt, judge: Judge) -> Scorer:
    def graph_trajectory_accuracy(
        *, outputs: Any, inputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Core[Feedback]:
        """Judge whether a thread's route through the graph was sensible."""
        trajectory = graph_trajectory(outputs, inputs)
        reference = (
            graph_trajectory(reference_outputs, argument="reference_outputs")
            if reference_outputs
            else None
        )
        turn_inputs = (
            trajectory.to_graph_trajectory().inputs
            if isinstance(trajectory, ThreadTrajectory)
            else trajectory.inputs
        )
        values, rendered = judge.render(
            inputs=turn_inputs,
            outputs=trajectory,
            reference=reference,
            reference_block=GRAPH_REFERENCE_BLOCK,
        )
        values["inputs_block"] = ""  # the thread already shows every turn's input
        values["thread"] = values["outputs"]
        score: Feedback = yield from judge.evaluate(prompt, {**values, **kwargs}, rendered)
        return score

    return graph_trajectory_accuracy


def create_graph_trajectory_llm_as_judge(
    *,
    prompt: Prompt = GRAPH_TRAJECTORY_ACCURACY_PROMPT,
    feedback_key: str = GRAPH_TRAJECTORY_KEY,
    **options: Unpack[JudgeOptions],
) -> Evaluator:
    """An LLM judge of a LangGraph thread's trajectory (feedback key ``graph_trajectory_accuracy``).

    Call the evaluator with ``outputs=`` a :class:`~lg_eval.ThreadTrajectory` (the
    prompt then shows resume values, state edits, errors and subgraph paths), a
    :class:`~lg_eval.GraphTrajectory`, or agentevals' graph trajectory dicts (with the
    turn inputs in ``inputs=`` or inside ``outputs``), and optionally a reference
    trajectory in the same shapes as ``reference_outputs=``. Extra keywords fill
    extra placeholders of a custom ``prompt``. See :class:`JudgeOptions` for options.

    Raises (when called):
        TrajectoryFormatError: the trajectory's shape is wrong, or its numbers of
            inputs, results and steps differ. Model failures never raise: they give
            ``score=None`` with ``metadata["error"]``.
    """
    judge = prompt_judge(prompt, options)
    return make_evaluator(
        feedback_key, _scorer(prompt, judge), reads="trajectory", score_range=judge.spec.score_range
    )


create_async_graph_trajectory_llm_as_judge = async_twin(create_graph_trajectory_llm_as_judge)
