"""What the ``lg_eval_play`` fixture gives a test: play a case on a fresh thread, get outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lg_eval.errors import InvalidOptionError
from lg_eval.langsmith import Checkpointer, case_from_inputs, play_outputs


@dataclass(frozen=True)
class Played:
    """A played case: the graph target outputs, by field."""

    outputs: dict[str, Any]

    @property
    def trajectory(self) -> dict[str, Any]:
        return dict(self.outputs["trajectory"])

    @property
    def thread(self) -> dict[str, Any]:
        return dict(self.outputs["thread"])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.outputs["messages"])

    @property
    def output(self) -> str | None:
        value = self.outputs["output"]
        return value if value is None else str(value)


@dataclass
class Player:
    """Plays cases on fresh threads of ``target`` (each call: a new thread and saver)."""

    target: Any = None
    checkpointer: Checkpointer = "memory://"
    allow_code: bool = True
    played: list[Played] = field(default_factory=list, repr=False)

    def __call__(self, case: Any, *, target: Any = None, reviewer: Any = None) -> Played:
        """Play ``case`` (a :class:`~lg_eval.datasets.Case`, its dict, or a list of turns)."""
        chosen = target if target is not None else self.target
        if chosen is None:
            raise InvalidOptionError(
                "lg_eval_play has no graph: set `lg_eval_target = module:attr` in the pytest "
                "ini options, override the `lg_eval_target` fixture, or pass target=..."
            )
        result = Played(
            play_outputs(
                chosen,
                _case(case),
                checkpointer=self.checkpointer,
                allow_code=self.allow_code,
                reviewer=reviewer,
            )
        )
        self.played.append(result)
        return result


def _case(case: Any) -> Any:
    from lg_eval.datasets import Case

    if isinstance(case, Case):
        return case
    if isinstance(case, Sequence) and not isinstance(case, str):
        return case_from_inputs({"turns": list(case), "case_id": "pytest"})
    if isinstance(case, Mapping):
        return Case.model_validate({"id": "pytest", **case})
    raise InvalidOptionError(
        f"lg_eval_play plays a Case, a case dict or a list of turns, not {type(case).__name__}."
    )
