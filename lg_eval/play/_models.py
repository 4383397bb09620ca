"""What playing a case recorded: per turn, what was sent and what the graph asked back."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lg_eval.datasets import TurnKind


class PendingInterrupt(BaseModel):
    """An ``interrupt()`` waiting for an answer: its id, the asking node's path, its payload.

    ``path`` names the node the way lg_eval's trajectories do: ``tools`` at the
    top level, ``researcher:deep_dive:verify`` inside subgraphs. A ``resume_fn``
    and a simulated reviewer receive a list of these.
    """

    model_config = ConfigDict(frozen=True)
    id: str
    path: str
    value: Any = None


class QuestionChange(BaseModel):
    """A recorded answer that was not sent: the graph asks something else at its node now
    (:func:`~lg_eval.play.same_question`)."""

    model_config = ConfigDict(frozen=True)
    node: str = Field(description="The top-level node that asked both questions.")
    answered: Any = Field(default=None, description="The question the answer was given to.")
    asked: Any = Field(default=None, description="The question the graph asks now.")
    answer: Any = Field(default=None, description="The recorded answer, not sent.")


class PlayedTurn(BaseModel):
    """One scripted turn as played."""

    index: int = Field(description="Position in the case's turns (``turns[index]``).")
    kind: TurnKind
    sent: Any = Field(
        default=None,
        description="What the player sent: the input, the resume payload (a value or an "
        "{interrupt id: value} map), the update ({values, as_node}); None for continue.",
    )
    asked: list[PendingInterrupt] = Field(
        default_factory=list, description="Interrupts pending when the turn ended."
    )
    next_nodes: list[str] = Field(
        default_factory=list,
        description="Nodes LangGraph had planned when the turn ended (a breakpoint or error).",
    )
    error: str | None = Field(
        default=None, description="'<ExceptionType>: <message>' if the graph raised."
    )


class PlayedCase(BaseModel):
    """A case played on one thread: where it ran, and what happened turn by turn."""

    case_id: str
    thread_id: str
    config: dict[str, Any] = Field(description="The run config the turns were played with.")
    turns: list[PlayedTurn] = Field(default_factory=list)
    error: str | None = Field(
        default=None,
        description="The error the case ended with (a turn raised and the script did not "
        "continue); None when every scripted turn was played.",
    )

    @property
    def completed(self) -> bool:
        """Whether every scripted turn was played without ending in an error."""
        return self.error is None


__all__ = ["PendingInterrupt", "PlayedCase", "PlayedTurn", "QuestionChange"]
