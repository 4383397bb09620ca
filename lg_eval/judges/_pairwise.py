"""The pairwise judge: which of two trajectories for the same input is better?

Models favour whichever answer they read first (or last). To cancel that, the
judge shows the pair as A and B in a random order and maps the verdict back;
with ``samples=N`` the order alternates between samples (starting at random),
so an even ``N`` shows both orders equally often and a verdict that only
followed the position comes out as a tie.

The result's score is the preference for the *first* trajectory of
``outputs=[first, second]``: 1.0 first wins, 0.0 second wins, 0.5 tie (with
samples, the mean over samples, a tie counting half). ``metadata["winner"]`` is
``"first"``, ``"second"`` or ``"tie"``, and ``metadata["orders"]`` records the
order each sample was shown.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Unpack, get_args

from lg_eval._effects import Core
from lg_eval._evaluator import Evaluator, Scorer, make_evaluator
from lg_eval._feedback import Feedback
from lg_eval._inputs import any_trajectory
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.judges import _prompts as prompts
from lg_eval.judges._core import Judge, Request, summaries
from lg_eval.judges._options import OPTIONS, SCORE_OPTIONS, JudgeOptions, build_judge
from lg_eval.judges._prompting import Prompt
from lg_eval.judges._render import render_fitted
from lg_eval.judges._schema import Judgment, OutputSpec, object_schema, reasoning_property, require
from lg_eval.judges._text import PromptText

PAIRWISE_KEY = "pairwise_trajectory_preference"
PAIRWISE_TOOL = "record_preference"
Order = Literal["random", "fixed"]
_PREFERENCE = {"first": 1.0, "second": 0.0, "tie": 0.5}


def pairwise_spec(use_reasoning: bool = True) -> OutputSpec:
    """A tool asking which of A and B is better (reasoning first, by default)."""
    properties: dict[str, Any] = {"reasoning": reasoning_property()} if use_reasoning else {}
    properties["winner"] = {
        "type": "string",
        "enum": ["A", "B", "tie"],
        "description": prompts.PAIRWISE_WINNER_DESCRIPTION,
    }
    schema = object_schema(PAIRWISE_TOOL, properties, prompts.PAIRWISE_TOOL_DESCRIPTION)
    read = _reader(schema, swapped=False)
    scales = {"preference": (0.0, 1.0)}
    return OutputSpec(PAIRWISE_TOOL, schema, read, scales, prompts.PAIRWISE_TOOL_DESCRIPTION)


def _reader(schema: Mapping[str, Any], *, swapped: bool) -> Callable[[dict[str, Any]], Judgment]:
    """Read a verdict given with the pair shown swapped (second as A) or not."""

    def read(args: dict[str, Any]) -> Judgment:
        require(args, schema)
        return _judgment(args, swapped=swapped)

    return read


def _judgment(args: dict[str, Any], *, swapped: bool) -> Judgment:
    shown = ("second", "first") if swapped else ("first", "second")
    winner = {"A": shown[0], "B": shown[1], "tie": "tie"}[args["winner"]]
    lead = f"(A was the {shown[0]} trajectory, B the {shown[1]}.)"
    reasoning = args.get("reasoning")
    return Judgment(
        {"preference": _PREFERENCE[winner]},
        f"{lead} {reasoning}" if reasoning else lead,
        {**args, "A": shown[0], "B": shown[1]},
    )


def _finish(judgment: Judgment) -> Feedback:
    preference = float(judgment.scores["preference"] or 0.0)
    winner = "first" if preference > 0.5 else "second" if preference < 0.5 else "tie"
    metadata = {"winner": winner, "scores": [preference, 1.0 - preference]}
    return Feedback(score=preference, comment=judgment.reasoning, metadata=metadata)


def _orders(order: str, samples: int, rng: random.Random) -> list[bool]:
    """Whether each sample shows the pair swapped (second trajectory as A)."""
    if order == "fixed":
        return [False] * samples
    start = rng.random() < 0.5
    return [start != bool(i % 2) for i in range(samples)]


def _scorer(prompt: Prompt, judge: Judge, order: str, rng: random.Random) -> Scorer:
    def pairwise_trajectory_preference(
        *, outputs: Any, inputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Core[Feedback]:
        """Decide which of two trajectories for the same input is better."""
        if not isinstance(outputs, Sequence) or isinstance(outputs, str) or len(outputs) != 2:
            raise TrajectoryFormatError(
                "The pairwise judge compares two trajectories: pass outputs=[first, second]."
            )
        first, second = (
            render_fitted(any_trajectory(o, argument=f"outputs[{i}]"), judge.max_chars)
            for i, o in enumerate(outputs)
        )
        values, rendered = judge.render(
            inputs=inputs,
            reference=(
                any_trajectory(reference_outputs, argument="reference_outputs")
                if reference_outputs
                else None
            ),
        )
        rendered = {**rendered, "first": first, "second": second}
        values["outputs"] = PromptText(
            f"<first>\n{first.text}\n</first>\n<second>\n{second.text}\n</second>"
        )
        requests = []
        orders = _orders(order, judge.samples, rng)
        for swapped in orders:
            shown_a, shown_b = (second, first) if swapped else (first, second)
            shown = {"trajectory_a": shown_a.text, "trajectory_b": shown_b.text}
            messages = judge.messages(prompt, {**values, **shown, **kwargs})
            requests.append(Request(messages, _reader(judge.spec.schema, swapped=swapped)))
        metadata = {
            **summaries(rendered),
            "orders": ["second-first" if s else "first-second" for s in orders],
        }
        score: Feedback = yield from judge.run(requests, _finish, metadata)
        return score

    return pairwise_trajectory_preference


def _prepare(
    options: Mapping[str, Any], order: str, seed: int | None
) -> tuple[Judge, random.Random]:
    if order not in get_args(Order):
        raise InvalidOptionError(f"order={order!r}: use one of {', '.join(get_args(Order))}.")
    spec = pairwise_spec(options.get("use_reasoning", True))
    judge = build_judge(options, spec=spec, allowed=OPTIONS - SCORE_OPTIONS, default_reduce="mean")
    return judge, random.Random(seed)


def create_pairwise_trajectory_judge(
    *,
    prompt: Prompt = prompts.PAIRWISE_TRAJECTORY_PROMPT,
    feedback_key: str = PAIRWISE_KEY,
    order: Order = "random",
    seed: int | None = None,
    **options: Unpack[JudgeOptions],
) -> Evaluator:
    """An LLM judge comparing two trajectories for the same input.

    Call the evaluator with ``outputs=[first, second]`` (any trajectory shapes),
    optionally ``inputs=`` and a ``reference_outputs=`` trajectory. ``order="random"``
    (default) shuffles which one is shown as A, using ``seed`` for repeatable runs;
    ``"fixed"`` always shows the first as A. See the module docs for the result, and
    :class:`JudgeOptions` for options (all but ``continuous``, ``choices`` and
    ``output_schema``).
    """
    judge, rng = _prepare(options, order, seed)
    return make_evaluator(
        feedback_key, _scorer(prompt, judge, order, rng), score_range=judge.spec.score_range
    )
