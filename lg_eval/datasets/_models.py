"""Case, expectation and evaluator-reference models.

A :class:`Case` is a script of turns played on one fresh thread plus what the run should
look like (:class:`Expected`); a :class:`~lg_eval.datasets.Dataset`
(:mod:`lg_eval.datasets._dataset`) is a named list of them. The models are the contract
between the files people write and everything that plays or scores them; loading and
dumping live in :mod:`lg_eval.datasets._io`.

Provenance travels with the data: a case's ``allows_code`` says whether its code
references (``graph``, ``resume_fn``, evaluator ``module:attr`` names) may be imported;
it is ``False`` for every case of a dataset whose ``allows_code`` is ``False``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from lg_eval._trajectory import GraphTrajectory
from lg_eval.datasets._turns import ResumeFnTurn, ScriptTurn

CODE_REFERENCE = r"^[\w.]+:[\w.]+$"
_CODE = re.compile(CODE_REFERENCE)


class ToolCallExpectation(BaseModel):
    """A tool call the run should make; ``args`` may list only some of the arguments.

    Written as a tool name (``refund``: any arguments) or as ``{name, args}``.
    """

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    args: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if not isinstance(data, dict):
            raise PydanticCustomError(
                "tool_call",
                f"a tool call is a tool name (refund) or a mapping with name and optional "
                f"args (name: refund, args: {{order_id: '42'}}), not {type(data).__name__}",
            )
        return data


class OutputMatch(BaseModel):
    """What the final answer must contain (every string) or equal."""

    model_config = ConfigDict(extra="forbid")
    contains: list[str] | None = None
    equals: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> OutputMatch:
        if (self.contains is None) == (self.equals is None):
            raise PydanticCustomError(
                "output_match", "write exactly one of contains: [...] or equals: '...'"
            )
        return self


def _output_tag(value: Any) -> str:
    return "kind=text" if isinstance(value, str) else "kind=match"


OutputExpectation = Annotated[
    Annotated[str, Tag("kind=text")] | Annotated[OutputMatch, Tag("kind=match")],
    Discriminator(_output_tag),
]
"""A string (the exact answer) or an :class:`OutputMatch`."""


class Expected(BaseModel):
    """What a case's thread should look like; every part is optional."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _calls_listed(cls, data: Any) -> Any:
        calls = data.get("tool_calls") if isinstance(data, dict) else None
        if calls is not None and not isinstance(calls, list):
            raise PydanticCustomError(
                "tool_calls",
                f"tool_calls is a list of tool calls, each a tool name or a mapping with name "
                f"and optional args ([refund] or [{{name: refund, args: {{order_id: '42'}}}}]), "
                f"not {type(calls).__name__}",
            )
        return data

    trajectory: GraphTrajectory | None = Field(
        default=None, description="The flat trajectory; usually only ``steps`` per turn."
    )
    tool_calls: list[ToolCallExpectation] | None = Field(
        default=None,
        description="The calls the run should make, in order: tool names or {name, args}.",
    )
    output: OutputExpectation | None = None
    max_steps: int | None = Field(
        default=None, ge=0, description="Cap on the node steps of the whole thread."
    )


InterruptRoute = Literal["user", "reviewer", "script"]
"""Who answers a question the graph asks (``interrupt()``) in a simulated conversation: the
simulated user, the simulated reviewer given to the player, or the next of ``answers``."""

MODEL_PROVIDERS = frozenset(
    {
        "anthropic", "anthropic_bedrock", "azure_ai", "azure_openai", "baseten", "bedrock",
        "bedrock_converse", "cohere", "deepseek", "fireworks", "google_anthropic_vertex",
        "google_genai", "google_vertexai", "groq", "huggingface", "ibm", "litellm", "mistralai",
        "nvidia", "ollama", "openai", "openrouter", "perplexity", "together", "upstage", "xai",
    }
)  # fmt: skip
"""The providers of LangChain's ``init_chat_model``: ``openai:gpt-4o-mini`` names a model,
``support.users:model`` (any other ``module:attr``) an object in code."""


class UserStop(BaseModel):
    """When a simulated conversation ends besides the user saying so (each checked after
    every turn; the first that holds ends it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    state: str | None = Field(
        default=None,
        pattern=CODE_REFERENCE,
        description="'module:attr' of a predicate called with the graph's state values; "
        "True ends the conversation.",
    )
    tool_call: ToolCallExpectation | None = Field(
        default=None,
        description="A tool call (a name, or {name, args} with some of its arguments) whose "
        "making ends the conversation.",
    )
    finished: bool = Field(
        default=False,
        description="End once a turn leaves the graph finished with no question pending.",
    )


class UserSimulation(BaseModel):
    """A simulated user who plays a case's conversation after its scripted turns (or
    instead of them): who it is, what it wants, the model that writes its turns, and when
    the conversation ends."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    persona: str = Field(min_length=1, description="Who the user is, in a sentence.")
    goal: str = Field(min_length=1, description="What the user wants from the agent.")
    model: str | None = Field(
        default=None,
        min_length=1,
        description="'provider:model' (as the judges' model=) or 'module:attr' naming a chat "
        "model or a function returning one; None: the player's user_model, else the judges' "
        "default model.",
    )
    seed: int | None = Field(
        default=0,
        description="Passed to a model that takes a seed, plus the repetition's number; None "
        "passes none.",
    )
    max_turns: int = Field(
        default=10, ge=1, le=1000, description="The most turns the simulated user writes."
    )
    first_input: Any = Field(
        default=None,
        description="A fixed first message (text) or graph input (a mapping) sent before the "
        "model writes anything; only for a case without scripted turns.",
    )
    instructions: str | None = Field(
        default=None, description="More guidance for the user's model (tone, constraints)."
    )
    stop: UserStop = Field(default_factory=UserStop)
    interrupts: InterruptRoute | dict[str, InterruptRoute] = Field(
        default="user",
        description="Who answers the graph's questions: user, reviewer or script (the next "
        "of answers), for every node or per top-level node ({node: route}; others: user).",
    )
    answers: list[Any] = Field(
        default_factory=list,
        description="Scripted answers, in order, to the questions routed to script.",
    )
    input_key: str = Field(
        default="messages",
        min_length=1,
        description="How a message becomes the graph's input: {messages: [{role: user, "
        "content}]} for 'messages', else {input_key: text}.",
    )

    @field_validator("interrupts", mode="before")
    @classmethod
    def _one_route_error(cls, value: Any) -> Any:
        routes = ("user", "reviewer", "script")
        given = list(value.values()) if isinstance(value, dict) else [value]
        if not given or any(route not in routes for route in given):
            raise PydanticCustomError(
                "interrupt_route",
                "interrupts is user, reviewer or script, or a mapping of top-level node names "
                "to one of them (approve_refund: reviewer), not {value}",
                {"value": repr(value)[:80]},
            )
        return value

    @property
    def model_reference(self) -> str | None:
        """``model`` when it names code (``module:attr``), None for a model string."""
        model = self.model
        if model is None or not _CODE.fullmatch(model):
            return None
        return None if model.partition(":")[0] in MODEL_PROVIDERS else model

    def route(self, node: str) -> InterruptRoute:
        """Who answers a question asked at top-level node ``node``."""
        if isinstance(self.interrupts, str):
            return self.interrupts
        return self.interrupts.get(node, "user")

    def code_references(self) -> list[tuple[str, str]]:
        """``(field path, reference)`` of every ``module:attr`` it would import."""
        refs = [("user.model", self.model_reference)] if self.model_reference else []
        return refs + ([("user.stop.state", self.stop.state)] if self.stop.state else [])


class EvaluatorRef(BaseModel):
    """An evaluator by registry name (or ``module:attr``), with options for its factory.

    Written as a plain string or as ``{name, options}``; dumps back to the
    string form when there are no options.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str) else data

    @model_serializer(mode="wrap")
    def _to_string(self, handler: SerializerFunctionWrapHandler) -> Any:
        return self.name if not self.options else handler(self)

    @property
    def is_code_reference(self) -> bool:
        """Whether ``name`` is a ``module:attr`` import rather than a registry name."""
        return ":" in self.name


class Case(BaseModel):
    """One conversation on a fresh thread, and what it should produce: scripted turns, a
    simulated user (``user``) after them or instead of them, or both."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    graph: str | None = Field(
        default=None,
        pattern=CODE_REFERENCE,
        description="Target for this case, 'module:attr'; overrides the dataset's graph.",
    )
    turns: list[ScriptTurn] = Field(
        default_factory=list, description="The scripted turns (at least one without user)."
    )
    user: UserSimulation | None = Field(
        default=None, description="A simulated user who goes on after the scripted turns."
    )
    expected: Expected = Field(default_factory=Expected)
    evaluators: list[EvaluatorRef] | None = Field(
        default=None, description="Replaces the dataset's default evaluators for this case."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    _allows_code: bool = PrivateAttr(default=True)

    @model_validator(mode="after")
    def _someone_speaks(self) -> Case:
        if not self.turns and self.user is None:
            raise PydanticCustomError(
                "case_turns",
                "a case needs turns: [...] (at least one), a simulated user: {persona, goal, "
                "...}, or both",
            )
        if self.turns and self.user is not None and self.user.first_input is not None:
            raise PydanticCustomError(
                "case_first_input",
                "user.first_input is the first message of a case without scripted turns; "
                "this case has turns: write it as its last scripted input instead",
            )
        return self

    @property
    def allows_code(self) -> bool:
        """Whether this case's ``resume_fn`` references may be imported.

        ``True`` for a case built in Python; ``False`` once it belongs to a dataset
        whose ``allows_code`` is ``False`` (data that did not come from a local file).
        """
        return self._allows_code

    def code_references(self) -> list[tuple[str, str]]:
        """``(field path, reference)`` of every ``module:attr`` the case would import."""
        refs = [("graph", self.graph)] if self.graph else []
        refs += [
            (f"turns[{i}].resume_fn", t.resume_fn)
            for i, t in enumerate(self.turns)
            if isinstance(t, ResumeFnTurn)
        ]
        refs += self.user.code_references() if self.user is not None else []
        refs += [
            (f"evaluators[{i}]", e.name)
            for i, e in enumerate(self.evaluators or [])
            if e.is_code_reference
        ]
        return refs
