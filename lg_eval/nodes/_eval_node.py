"""``EvalNode``: evaluators as a node of the user's own graph.

::

    builder = StateGraph(EvalMessagesState)
    builder.add_node("check", EvalNode([EvalSpec(tool_selection, threshold=1.0)],
                                       reference=from_config("expected_tools")))
    builder.add_conditional_edges("check", route_on_score(passed="respond", failed="revise"))

The node scores the state it receives and appends one feedback dict per
evaluator result to ``state[key]`` (see :mod:`lg_eval.nodes._state`). It
writes nothing else, so it can neither corrupt nor drop the host's state, and
it runs no subgraph or extra task: the host's trajectory gains exactly one
step, the node's own name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from pydantic import PlainValidator, SkipValidation
from pydantic_core import PydanticCustomError

from lg_eval._arguments import Flag, Seconds, Text, validated
from lg_eval._effects import Core
from lg_eval.errors import InvalidOptionError, LgEvalError, MissingCheckpointerError
from lg_eval.nodes._feedback import to_feedback
from lg_eval.nodes._runnable import CoreNode
from lg_eval.nodes._spec import DEFAULT_TIMEOUT, EvaluatorLike, resolve
from lg_eval.nodes._state import DEFAULT_KEY
from lg_eval.nodes._thread import current_checkpoint, read_in_flight
from lg_eval.scoring import Outcome, call_evaluators, raise_first

THREAD = "thread"
"""``source=THREAD``: evaluate the thread's own trajectory, read from the checkpointer."""


@dataclass(frozen=True)
class FromState:
    """Read a value from the node's input state under ``key``."""

    key: str


@dataclass(frozen=True)
class FromConfig:
    """Read a value from ``config["configurable"][key]`` of the run."""

    key: str


def from_state(key: str) -> FromState:
    """A reference (or inputs) taken from the state at evaluation time."""
    return FromState(key)


def from_config(key: str) -> FromConfig:
    """A reference (or inputs) taken from the run's ``config["configurable"]``."""
    return FromConfig(key)


Source = str | Callable[[Any], Any]
AnyPregel = Pregel[Any, Any, Any, Any]
GraphRef = AnyPregel | Callable[[], AnyPregel] | None


def _source(value: object) -> object:
    if callable(value) or (isinstance(value, str) and value):
        return value
    raise PydanticCustomError("source", "use a state key, 'thread' or a function of the state")


class EvalNode(CoreNode):
    """Run evaluators inside a LangGraph graph and record their feedback in its state.

    Args:
        evaluators: functions following the evaluator convention (sync or
            async), registered names, or :class:`EvalSpec` objects.
        source: what is evaluated (passed as ``outputs``): a state key
            (default ``"messages"``: the tool-call trajectory so far),
            ``"thread"`` for the thread's own :class:`~lg_eval.ThreadTrajectory`
            read through the checkpointer (see :mod:`lg_eval.nodes._thread` for
            exactly which turns and steps it holds), or ``callable(state)``.
        reference: passed as ``reference_outputs``: a fixed value, or
            :func:`from_state` / :func:`from_config` to read it per run. A
            dict holding one expectation per evaluator (``{"trajectory": ...,
            "tool_calls": ..., "output": ...}``) serves every lg_eval evaluator
            as it is (each reads its own field); ``EvalSpec(fn,
            reference_key="output")`` gives a custom evaluator one part.
        inputs: passed as ``inputs``, given like ``reference``.
        key: the state key the feedback is appended to; declare it with
            :data:`~lg_eval.nodes.Evaluations` (default ``"evaluations"``).
        graph: the compiled host graph, or a zero-argument callable returning
            it (the node is built before the graph is compiled, so
            ``graph=lambda: app`` is the usual form). Needed for
            ``source="thread"``; when given, every feedback is also tagged with
            the turn index (otherwise ``turn`` is None). In a subgraph, give the
            root graph: the node reads the root thread.
        fail_fast: re-raise the first evaluator error instead of recording it
            as a feedback with ``error`` set (the default keeps the graph running).
        name: the node name used when added without one, and in feedback
            tags when LangGraph does not report it.
        checkpoint_timeout: seconds to wait for the running superstep's
            checkpoint to be saved before reading the thread.
        timeout: seconds all evaluators together may take (default 600; None:
            no limit). An evaluator still running then is abandoned and its
            feedback is an :class:`~lg_eval.nodes.EvaluatorTimeoutError`.
        evaluator_timeout: seconds each evaluator may take, unless its
            :class:`EvalSpec` sets ``timeout`` (default None: only ``timeout``).

    Every feedback dict is tagged with ``node``, ``step``, ``checkpoint_id``
    (the checkpoint whose state was evaluated) and ``turn``.

    Unless ``fail_fast``, no evaluator behaviour stops the host graph: an
    evaluator that raises (even an exception that cannot be printed), times
    out, returns something unusable (a NaN or infinite score, a string, a
    score outside its declared range) gives an error feedback with
    ``passed=None``, and metadata is stored as plain data (what could not be
    kept is named in ``metadata["dropped"]``). The node writes nothing but its
    ``key``.
    """

    @validated
    def __init__(
        self,
        evaluators: SkipValidation[Sequence[EvaluatorLike] | EvaluatorLike],
        *,
        source: Annotated[Source, PlainValidator(_source)] = "messages",
        reference: Any = None,
        inputs: Any = None,
        key: Text = DEFAULT_KEY,
        graph: SkipValidation[GraphRef] = None,
        fail_fast: Flag = False,
        name: str = "evaluate",
        checkpoint_timeout: Seconds = 10.0,
        timeout: Seconds | None = DEFAULT_TIMEOUT,
        evaluator_timeout: Seconds | None = None,
    ) -> None:
        super().__init__(self._evaluate, name=name)
        if source == THREAD and graph is None:
            raise InvalidOptionError(
                "source='thread' reads the thread through the host graph: pass graph=app, or "
                "graph=lambda: app when the node is built before the graph is compiled."
            )
        self.bound = resolve(evaluators)
        self.source = source
        self.reference = reference
        self.inputs = inputs
        self.key = key
        self.graph = graph
        self.fail_fast = fail_fast
        self.checkpoint_timeout = checkpoint_timeout
        self.timeout = timeout
        self.evaluator_timeout = evaluator_timeout

    def _host(self) -> AnyPregel:
        if self.graph is None:  # only called when a graph was given
            raise InvalidOptionError("EvalNode was built without graph=, so it has no host.")
        return self.graph if isinstance(self.graph, Pregel) else self.graph()

    def _evaluate(self, state: Any, config: RunnableConfig) -> Core[dict[str, Any]]:
        if not _has(state, self.key):
            raise InvalidOptionError(
                f"The graph's state has no {self.key!r} key, so EvalNode could not record "
                f"its results; add `{self.key}: Evaluations` (from lg_eval.nodes) to the "
                "state schema."
            )
        thread, turn, failure = None, None, None
        if self.graph is not None:
            try:
                thread, turn = yield from read_in_flight(
                    self._host(), config, self.checkpoint_timeout
                )
            except LgEvalError as exc:  # fatal only when the thread is what is evaluated
                failure = exc
        try:
            kwargs = self._arguments(state, config, thread, failure)
        except Exception as exc:  # nothing to evaluate: every evaluator reports why
            if self.fail_fast:
                raise
            calls = [b.calling({}) for b in self.bound]
            outcomes: list[Outcome] = [(None, exc)] * len(calls)
        else:
            calls = [b.calling(kwargs, self.evaluator_timeout) for b in self.bound]
            outcomes = yield call_evaluators(calls, self.timeout)
        if self.fail_fast:
            raise_first(outcomes)
        metadata = config.get("metadata") or {}
        tags = {
            "node": metadata.get("langgraph_node", self.name),
            "step": metadata.get("langgraph_step"),
            "checkpoint_id": current_checkpoint(config),
            "turn": turn,
        }
        records = [
            feedback.model_copy(update=tags).model_dump()
            for bound, call, outcome in zip(self.bound, calls, outcomes, strict=True)
            for feedback in to_feedback(bound, call, outcome)
        ]
        return {self.key: records}

    def _arguments(
        self, state: Any, config: RunnableConfig, thread: Any, failure: Exception | None
    ) -> dict[str, Any]:
        if self.source == THREAD:
            if thread is None:
                raise failure or MissingCheckpointerError("The thread could not be read.")
            outputs = thread
        else:
            outputs = copy.deepcopy(_select(state, self.source))
        return {
            "outputs": outputs,
            "reference_outputs": _value(self.reference, state, config),
            "inputs": _value(self.inputs, state, config),
        }


def _has(state: Any, key: str) -> bool:
    if isinstance(state, Mapping):
        return key in state
    return hasattr(state, key)


def _select(state: Any, source: Source) -> Any:
    if callable(source):
        return source(state)
    if isinstance(state, Mapping):
        if source not in state:
            raise KeyError(
                f"the state has no {source!r} value yet (keys: {', '.join(map(str, state))})"
            )
        return state[source]
    return getattr(state, source)


def _value(spec: Any, state: Any, config: RunnableConfig) -> Any:
    if isinstance(spec, FromState):
        return copy.deepcopy(_select(state, spec.key))
    if isinstance(spec, FromConfig):
        configurable = config.get("configurable") or {}
        if spec.key not in configurable:
            raise KeyError(f"config['configurable'] has no {spec.key!r}")
        return copy.deepcopy(configurable[spec.key])
    return copy.deepcopy(spec)  # a fixed value: no evaluator can change it for later runs
