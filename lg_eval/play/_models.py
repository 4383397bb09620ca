"""What playing a case recorded: per turn, who spoke, what was sent and what the graph
asked back; for a simulated conversation, why it ended and what the simulated user cost.

And the type aliases the player modules share (LangGraph's classes are generic).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
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


Speaker = Literal["script", "user", "reviewer", "recording"]
"""Who wrote what a turn sent: the case's script, the simulated user, the simulated
reviewer, or a recording of a production thread's humans (a replay)."""

StopReason = Literal["user", "state", "tool_call", "finished", "max_turns"]
"""Why a simulated conversation ended: the user said it was done; the stop predicate held
on the graph's state; the expected tool call was made; a turn left the graph finished with
no question; the user wrote its ``max_turns``."""


class SpeakerUsage(BaseModel):
    """What a simulated speaker's model calls cost, counted apart from the agent's and the
    judges' (``usage_metadata`` tokens, the provider's cost when it reports one)."""

    model_config = ConfigDict(frozen=True)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    latency_s: float = Field(default=0.0, description="Wall time of the calls, retries included.")

    def plus(self, other: SpeakerUsage | None) -> SpeakerUsage:
        """This usage and ``other``'s together."""
        if other is None:
            return self
        costs = [cost for cost in (self.cost, other.cost) if cost is not None]
        return SpeakerUsage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost=sum(costs) if costs else None,
            latency_s=self.latency_s + other.latency_s,
        )


class ConversationEnd(BaseModel):
    """Why a simulated conversation ended."""

    model_config = ConfigDict(frozen=True)
    reason: StopReason
    detail: str | None = Field(
        default=None,
        description="The user's last words (not sent), the predicate that held, the tool call "
        "made, or the turn limit.",
    )
    usage: SpeakerUsage | None = Field(
        default=None, description="The user's call that ended it (when the user did)."
    )


class PlayedTurn(BaseModel):
    """One turn as played."""

    index: int = Field(
        description="Position in the case's turns (``turns[index]``); the turns a simulated "
        "speaker played after them go on counting."
    )
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
    by: Speaker = Field(default="script", description="Who wrote what was sent.")
    reply: str | None = Field(
        default=None,
        description="What the agent answered when the turn ended, as a simulated user read it "
        "(its final answer); None outside a simulated conversation, and for a turn that asked, "
        "paused or raised.",
    )
    usage: SpeakerUsage | None = Field(
        default=None, description="The simulated user's model calls that wrote this turn."
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
    conversation: ConversationEnd | None = Field(
        default=None, description="Why the simulated conversation ended (None: no simulated user)."
    )

    @property
    def simulator_usage(self) -> SpeakerUsage | None:
        """Every call of the simulated user's model (None when none was made)."""
        usage = None
        ended = self.conversation.usage if self.conversation is not None else None
        for part in [*(turn.usage for turn in self.turns), ended]:
            if part is not None:
                usage = part if usage is None else usage.plus(part)
        return usage

    @property
    def completed(self) -> bool:
        """Whether every scripted turn was played without ending in an error."""
        return self.error is None


Graph: TypeAlias = Pregel[Any, Any, Any, Any]
"""Any compiled LangGraph graph (a ``StateGraph`` compiled, or an ``@entrypoint``)."""
Saver: TypeAlias = BaseCheckpointSaver[Any]
"""Any checkpointer."""
