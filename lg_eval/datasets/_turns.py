"""The scripted turns of a case: one model per kind of call the player makes.

A turn is written as a mapping with exactly one key naming its kind::

    - input: {messages: [{role: user, content: hi}]}   # invoke(input)
    - resume: "It's sunny"                             # Command(resume=...)
    - resume_by_node: {legal_review: yes, finance_review: no}
    - resume_fn: "examples.answers:approve_weather"     # computed from the pending interrupts
    - continue: true                                    # invoke(None)
    - update: {values: {draft: "..."}, as_node: draft}  # update_state, not an invoke

:data:`ScriptTurn` is the union; a mapping with zero or several of the keys
gets one clear error instead of pydantic's six "field required" lines.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)
from pydantic_core import PydanticCustomError

TurnKind = Literal["input", "resume", "resume_by_node", "resume_fn", "continue", "update"]
TURN_KEYS: tuple[str, ...] = (
    "input",
    "resume",
    "resume_by_node",
    "resume_fn",
    "continue",
    "update",
)
TAG_PREFIX = "kind="
"""Prefix of the union tags, so error locations can drop them (``turns[1].update.values``)."""
REVIEWER = {"reviewer": True}
"""``resume: {reviewer: true}``: ask the simulated reviewer passed to the player."""


class _TurnModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)
    kind: ClassVar[TurnKind]


class InputTurn(_TurnModel):
    """Start a run with a new graph input: ``graph.invoke(input, config)``."""

    kind: ClassVar[TurnKind] = "input"
    input: Any

    @field_validator("input")
    @classmethod
    def _not_none(cls, value: Any) -> Any:
        if value is None:
            raise PydanticCustomError(
                "turn_input_none",
                "input: null would invoke(None), which continues the thread; write continue: true",
            )
        return value


class ResumeTurn(_TurnModel):
    """Answer the pending interrupt (or every pending one) with ``resume``.

    ``resume: {reviewer: true}`` asks the simulated reviewer the player was given
    instead of sending a fixed value.
    """

    kind: ClassVar[TurnKind] = "resume"
    resume: Any

    @field_validator("resume")
    @classmethod
    def _not_none(cls, value: Any) -> Any:
        if value is None:
            raise PydanticCustomError(
                "turn_resume_none",
                "resume: null sends no answer; give a value, or write continue: true",
            )
        return value

    @property
    def asks_reviewer(self) -> bool:
        """Whether this turn is answered by the simulated reviewer."""
        return isinstance(self.resume, dict) and self.resume == REVIEWER


class ResumeByNodeTurn(_TurnModel):
    """Answer parallel interrupts by the path of the node that asked (``parent:child``)."""

    kind: ClassVar[TurnKind] = "resume_by_node"
    resume_by_node: dict[str, Any] = Field(min_length=1)


class ResumeFnTurn(_TurnModel):
    """Answer with ``module:callable``, called with the pending interrupts.

    The callable gets a list of objects with ``id``, ``path`` and ``value`` and
    returns one value (for every pending interrupt) or an ``{id: value}`` map.
    """

    kind: ClassVar[TurnKind] = "resume_fn"
    resume_fn: str = Field(pattern=r"^[\w.]+:[\w.]+$")


class ContinueTurn(_TurnModel):
    """``graph.invoke(None, config)``: go on after a breakpoint or an error."""

    kind: ClassVar[TurnKind] = "continue"
    continue_: Literal[True] = Field(alias="continue")


class StateUpdate(BaseModel):
    """The arguments of ``graph.update_state(config, values, as_node=as_node)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    values: dict[str, Any]
    as_node: str | None = None


class UpdateTurn(_TurnModel):
    """Edit the thread's state between runs (``update_state``; nothing is invoked)."""

    kind: ClassVar[TurnKind] = "update"
    update: StateUpdate


def _turn_tag(value: Any) -> str | None:
    if isinstance(value, _TurnModel):
        return TAG_PREFIX + value.kind
    if isinstance(value, dict):
        keys = [k for k in TURN_KEYS if k in value]
        if len(keys) == 1:
            return TAG_PREFIX + keys[0]
    return None


def _check_turn(value: Any) -> Any:
    """One clear error for a turn that is not a mapping with exactly one turn key."""
    if isinstance(value, _TurnModel):
        return value
    expected = ", ".join(TURN_KEYS)
    if not isinstance(value, dict):
        raise PydanticCustomError(
            "script_turn",
            "a turn is a mapping with exactly one of {expected} (got {got})",
            {"expected": expected, "got": type(value).__name__},
        )
    keys = [str(k) for k in value if k in TURN_KEYS]
    if len(keys) != 1:
        got = ", ".join(keys) if keys else "none"
        unknown = [str(k) for k in value if k not in TURN_KEYS]
        if unknown and not keys:
            got += f"; unknown keys: {', '.join(unknown)}"
        raise PydanticCustomError(
            "script_turn",
            "a turn needs exactly one of {expected} (got {got})",
            {"expected": expected, "got": got},
        )
    return value


ScriptTurn = Annotated[
    Annotated[InputTurn, Tag(TAG_PREFIX + "input")]
    | Annotated[ResumeTurn, Tag(TAG_PREFIX + "resume")]
    | Annotated[ResumeByNodeTurn, Tag(TAG_PREFIX + "resume_by_node")]
    | Annotated[ResumeFnTurn, Tag(TAG_PREFIX + "resume_fn")]
    | Annotated[ContinueTurn, Tag(TAG_PREFIX + "continue")]
    | Annotated[UpdateTurn, Tag(TAG_PREFIX + "update")],
    Discriminator(_turn_tag),
    BeforeValidator(_check_turn),
]
"""Any scripted turn; validates a mapping into the model its one key names."""
