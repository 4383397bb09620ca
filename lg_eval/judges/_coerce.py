"""Accept trajectories in the shapes users have: ours, agentevals' dicts, messages.

A stop-gap until ``lg_eval.evaluators._inputs`` lands: the graph-trajectory
coercion here should move there so every evaluator shares it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from lg_eval.errors import TrajectoryFormatError
from lg_eval.messages import to_openai_messages
from lg_eval.trajectory import GraphTrajectory, ThreadTrajectory

GraphLike = ThreadTrajectory | GraphTrajectory

_GRAPH_SHAPES = (
    "a ThreadTrajectory, a GraphTrajectory, or an agentevals graph trajectory "
    "({'inputs': [...], 'results': [...], 'steps': [[...], ...]}, or the "
    "{'inputs': [...], 'outputs': {...}} dict agentevals' extractors return)"
)


def graph_trajectory(outputs: Any, inputs: Any = None, *, argument: str = "outputs") -> GraphLike:
    """``outputs`` (plus separately passed ``inputs``) as a thread or flat graph trajectory.

    Raises:
        TrajectoryFormatError: the shape is not a graph trajectory, or the numbers of
            inputs, results and steps differ (the message says which).
    """
    if isinstance(outputs, ThreadTrajectory):
        return outputs
    if isinstance(outputs, Mapping) and "turns" in outputs:
        return _validated(ThreadTrajectory, outputs, argument)
    if isinstance(outputs, Mapping) and isinstance(outputs.get("outputs"), Mapping | GraphLike):
        if inputs is None:
            inputs = outputs.get("inputs")
        return graph_trajectory(outputs["outputs"], inputs, argument=f"{argument}['outputs']")
    if isinstance(outputs, GraphTrajectory):
        data: dict[str, Any] = outputs.model_dump()
    elif isinstance(outputs, Mapping) and ("results" in outputs or "steps" in outputs):
        data = dict(outputs)
    else:
        raise TrajectoryFormatError(
            f"{argument} is a {type(outputs).__name__}; the graph trajectory judge expects "
            f"{_GRAPH_SHAPES}."
        )
    if inputs is not None:
        data["inputs"] = _input_list(inputs)
    _check_lengths(data, argument)
    return _validated(GraphTrajectory, data, argument)


def _input_list(inputs: Any) -> list[Any]:
    if isinstance(inputs, Mapping):
        if "inputs" not in inputs:
            raise TrajectoryFormatError(
                f"inputs is a dict with keys {sorted(map(str, inputs))}; pass the list of "
                "turn inputs, or a dict holding it under 'inputs'."
            )
        inputs = inputs["inputs"]
    if not isinstance(inputs, list | tuple):
        raise TrajectoryFormatError(
            f"inputs is a {type(inputs).__name__}; pass one input per turn, as a list."
        )
    return list(inputs)


def _check_lengths(data: Mapping[str, Any], argument: str) -> None:
    sizes = {key: len(data.get(key) or []) for key in ("inputs", "results", "steps")}
    if len(set(sizes.values())) == 1:
        return
    counts = ", ".join(f"{key} has {n}" for key, n in sizes.items())
    differing = [
        f"{a} ({sizes[a]}) vs {b} ({sizes[b]})"
        for a, b in (("inputs", "results"), ("inputs", "steps"), ("results", "steps"))
        if sizes[a] != sizes[b]
    ]
    hint = (
        " No inputs were given: pass inputs= (agentevals' extractor returns them next to "
        "'outputs')."
        if sizes["inputs"] == 0
        else ""
    )
    raise TrajectoryFormatError(
        f"{argument}: the graph trajectory's lengths differ ({counts}; mismatched: "
        f"{', '.join(differing)}). Each turn needs one input, one result and one list of "
        f"steps.{hint}"
    )


def _validated(model: type[GraphLike], data: Mapping[str, Any], argument: str) -> GraphLike:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise TrajectoryFormatError(
            f"{argument} is not a valid {model.__name__}: {problems}."
        ) from exc


def any_trajectory(value: Any, *, argument: str = "outputs") -> Any:
    """A graph trajectory, a list of OpenAI-style messages, or (else) the value itself."""
    if isinstance(value, GraphLike):
        return value
    if isinstance(value, Mapping) and ("turns" in value or "steps" in value):
        return graph_trajectory(value, argument=argument)
    if isinstance(value, str):
        return value
    try:
        return to_openai_messages(value, argument=argument)
    except TrajectoryFormatError:
        return value


__all__ = ["GraphLike", "any_trajectory", "graph_trajectory"]
