"""A flight-booking agent built with langchain's ``create_agent`` and
``HumanInTheLoopMiddleware``: ``book_flight`` is gated, and running it writes the booking
to a ledger file (a side effect a replay must never cause for a question nobody answered).

The model is a deterministic stand-in: asked by a human, it proposes
``book_flight(flight=<its flight>)``; given the tool's result (or the reviewer's
rejection), it answers with that text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

BATCHED_NODE = "HumanInTheLoopMiddleware.after_model"
PER_CALL_NODE = "tools"
APPROVE = {"decisions": [{"type": "approve"}]}
REQUEST = "Book me the morning flight to London."


class FlightModel(BaseChatModel):
    """Proposes one ``book_flight`` call per human request; then says what came back."""

    flight: str

    @property
    def _llm_type(self) -> str:
        return "flight-test"

    def bind_tools(self, tools: Any, **kwargs: Any) -> FlightModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        last = messages[-1]
        if isinstance(last, ToolMessage):
            message = AIMessage(f"Done: {last.content}")
        else:
            call = {"name": "book_flight", "args": {"flight": self.flight}, "id": "call_book"}
            message = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])


def build(
    checkpointer: Any = None,
    *,
    flight: str,
    ledger: Path,
    mode: Any = "batched",
    prefix: str = "Tool execution requires approval",
) -> Any:
    """The agent whose model proposes ``flight``; each booking is a line of ``ledger``."""

    @tool
    def book_flight(flight: str) -> str:
        """Book a flight by its number."""
        with ledger.open("a", encoding="utf-8") as out:
            out.write(flight + "\n")
        return f"booked {flight}"

    gate = HumanInTheLoopMiddleware(
        interrupt_on={"book_flight": {"allowed_decisions": ["approve", "reject"]}},
        description_prefix=prefix,
        interrupt_mode=mode,
    )
    return create_agent(
        FlightModel(flight=flight), tools=[book_flight], middleware=[gate],
        checkpointer=checkpointer,
    )  # fmt: skip


def booked(ledger: Path) -> list[str]:
    """The flights booked so far, in order."""
    return ledger.read_text(encoding="utf-8").split() if ledger.exists() else []
