"""Approval policies: rules every thread must keep about the calls a human reviews.

A score says how good a thread was; a policy says whether it broke a rule. The question a
team running human-in-the-loop agents asks first is of the second kind: did a tool that
needs an approval run without one, or with other arguments than the human approved, or
again after the human rejected it? :func:`create_approval_policy_evaluator` answers it from
the thread itself: the calls its tools ran (:func:`lg_eval.messages.call_outcomes`'s
reading: a tool message answers them, an edit as edited) and the human's decision on each
(:mod:`lg_eval._reviews`: which question asked about which call, and the answer).

Rules (an :class:`ApprovalPolicy`):

* ``require_approval``: these tools (``"*"``: every tool) run only after an approval (or
  an edit) of that very call, in the turn of that answer or later, and, with
  ``same_arguments`` (default), with the arguments approved, or edited;
* ``after_rejection``: no call runs that the human rejected, nor a later call of the same
  action (``"call"``: the same tool with the same arguments; ``"tool"``: the same tool)
  unless a later answer approved it; ``"off"`` leaves this out;
* ``bounds``: ``"refund.amount <= approved"`` (the amount the human approved, or edited)
  or ``"refund.amount <= 500"``: an argument of each run of a tool compared with a bound.

The feedback, keyed ``hitl_policy``, is True when the thread keeps every rule, else False,
its comment naming the first violation by turn and call (``Turn 3: book_flight(flight="LH
901") ran without an approval.``) and ``metadata["violations"]`` listing each (rule, turn,
call, detail). A value that is no thread (a flat trajectory, messages) gets no score: the
human's decisions are in a thread's resume turns.

Registered as ``hitl_policy`` (options as above, checked where given); it needs no
reference, so it runs in goldens, replays, sweeps and eval nodes alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from lg_eval._arguments import invalid_option
from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import Feedback
from lg_eval._inputs import recorded_trajectory
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._hitl_calls import Decide, decision_of
from lg_eval.evaluators._hitl_sides import EXPECTED
from lg_eval.evaluators._policy_check import check_policy

KEY = "hitl_policy"
Op = Literal["<=", "<", ">=", ">", "=="]
AfterRejection = Literal["call", "tool", "off"]
_BOUND = re.compile(
    r"^\s*(?P<tool>[^.\s]+)\.(?P<arg>[A-Za-z0-9_][\w.-]*)\s*(?P<op><=|>=|==|<|>)\s*(?P<bound>[^\s<>=]\S*)\s*$"
)


class ArgBound(BaseModel):
    """``tool.arg op bound``: an argument of every run of ``tool`` compared with a number,
    or with ``"approved"``, the same argument of the call the human approved (or edited).
    ``arg`` is a dotted path into the arguments (``"refund.amount"``: ``amount``;
    ``"transfer.to.iban"``: ``to`` then ``iban``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1)
    arg: str = Field(min_length=1)
    op: Op
    bound: float | Literal["approved"]

    @classmethod
    def parse(cls, text: str) -> ArgBound:
        """``"refund.amount <= approved"`` or ``"refund.amount <= 500"``."""
        found = _BOUND.match(text)
        if found is None:
            raise PydanticCustomError(
                "bound",
                "{text} is no bound; write TOOL.ARG OP BOUND, such as 'refund.amount <= "
                "approved' or 'refund.amount <= 500' (OP: <=, <, >=, >, ==)",
                {"text": repr(text)[:80]},
            )
        bound: float | str = found["bound"]
        if bound != "approved":
            try:
                bound = float(bound)
            except ValueError:
                raise PydanticCustomError(
                    "bound",
                    "{text}: the bound {bound} is neither a number nor 'approved'",
                    {"text": repr(text)[:80], "bound": repr(bound)},
                ) from None
        return cls(tool=found["tool"], arg=found["arg"], op=found["op"], bound=bound)

    def __str__(self) -> str:
        return f"{self.tool}.{self.arg} {self.op} {self.bound}"


class ApprovalPolicy(BaseModel):
    """The rules of :func:`create_approval_policy_evaluator` (see the module's docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    require_approval: tuple[str, ...] = ()
    same_arguments: bool = True
    after_rejection: AfterRejection = "call"
    bounds: tuple[ArgBound, ...] = ()

    @field_validator("require_approval", mode="before")
    @classmethod
    def _tools(cls, value: Any) -> Any:
        items = [value] if isinstance(value, str) else value
        if isinstance(items, Sequence | set | frozenset) and all(
            isinstance(item, str) and item.strip() for item in items
        ):
            return tuple(sorted({item.strip() for item in items}))
        raise PydanticCustomError("tools", "a tool name or a list of tool names ('*': every tool)")

    @field_validator("bounds", mode="before")
    @classmethod
    def _bounds(cls, value: Any) -> Any:
        items = [value] if isinstance(value, str | Mapping | ArgBound) else value
        if not isinstance(items, Sequence):
            raise PydanticCustomError(
                "bounds", "a bound such as 'refund.amount <= approved', or a list of them"
            )
        return tuple(ArgBound.parse(item) if isinstance(item, str) else item for item in items)

    def gates(self, tool: str) -> bool:
        """Whether ``tool`` needs an approval."""
        return "*" in self.require_approval or tool in self.require_approval


def create_approval_policy_evaluator(
    *,
    require_approval: Sequence[str] | str = (),
    same_arguments: bool = True,
    after_rejection: AfterRejection = "call",
    bounds: Sequence[str | Mapping[str, Any] | ArgBound] | str = (),
    decision: Decide | None = None,
) -> Evaluator:
    """An evaluator holding a thread to an approval policy (see the module's docstring).

    ``require_approval``: tool names (or ``"*"``) that run only after an approval of that
    call; ``same_arguments``: and with the arguments approved or edited;
    ``after_rejection``: ``"call"``, ``"tool"`` or ``"off"``; ``bounds``: strings such as
    ``"refund.amount <= approved"`` (or ``{"tool", "arg", "op", "bound"}`` dicts).
    ``decision(answer)`` reads what an answer decided, as for ``hitl_match`` (the default
    reads LangChain's ``{"decisions": [...]}``, ``{"type": ...}``, ``True`` / ``False`` and
    words such as ``approve`` / ``reject``).

    Raises:
        InvalidOptionError: an option of the wrong type, a bound that does not parse, or a
            ``decision`` that is not callable, naming the option.
    """
    try:
        policy = ApprovalPolicy(
            require_approval=require_approval,
            same_arguments=same_arguments,
            after_rejection=after_rejection,
            bounds=bounds,
        )
    except ValidationError as exc:
        raise InvalidOptionError(f"{KEY}: {invalid_option(exc)}") from None
    if decision is not None and not callable(decision):
        raise InvalidOptionError(
            f"{KEY}: decision must be a function (answer) -> 'approve' | 'reject' | ..., not "
            f"{type(decision).__name__}."
        )
    decide = decision or decision_of

    def scorer(*, outputs: Any, **_: Any) -> Feedback:
        recorded = recorded_trajectory(outputs, "outputs", EXPECTED)
        if not isinstance(recorded, ThreadTrajectory):
            return Feedback(
                score=None,
                comment=f"{KEY} reads a thread (lg_eval.extract_thread): the human's decisions "
                "are in its resume turns, which a flat trajectory does not keep.",
            )
        return check_policy(policy, recorded, decide)

    scorer.__doc__ = create_approval_policy_evaluator.__doc__
    return make_evaluator(KEY, scorer, reads="thread", score_range="bool")
