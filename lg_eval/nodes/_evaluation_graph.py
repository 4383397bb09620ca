"""``create_evaluation_graph``: evaluation as a checkpointed LangGraph graph.

::

    __start__ -> extract -> evaluate (one Send task per evaluator) -> aggregate
              -> review (interrupt() for a human, only when needed) -> __end__

* ``extract`` takes the case's ``trajectory`` as given, or extracts the
  ``target`` thread from its graph (named, see :class:`TargetRef`), and
  clears the results of an earlier evaluation on the same thread;
* ``evaluate`` runs one evaluator per task, all in one parallel superstep;
* ``aggregate`` computes the weighted score, the pass/fail verdict and
  whether a human should look;
* ``review`` pauses with ``interrupt(case)``; the reviewer resumes with
  ``Command(resume={"verdict": "pass" | "fail", "note": ...})``, which is
  recorded in the result and decides ``passed``.

Like any LangGraph graph it is checkpointed: a crash between (or inside) a
superstep loses nothing, ``invoke(None, config)`` goes on from the last
checkpoint (finished evaluator tasks are not run again), and the evaluation
thread can itself be extracted with :func:`lg_eval.extract_thread`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.types import Overwrite, Send, interrupt
from pydantic import SkipValidation, ValidationError

from lg_eval._arguments import Flag, Seconds, validated
from lg_eval._effects import Core
from lg_eval._feedback import Threshold
from lg_eval._offline import offline
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.extract._thread import extraction
from lg_eval.nodes._evaluation_state import (
    EvalCase,
    EvaluationOutput,
    EvaluationResult,
    EvaluationState,
    Review,
    ReviewDecision,
    from_plain,
    to_plain,
)
from lg_eval.nodes._feedback import to_feedback
from lg_eval.nodes._routing import weighted_score
from lg_eval.nodes._runnable import CoreNode
from lg_eval.nodes._spec import DEFAULT_TIMEOUT, EvaluatorLike, resolve
from lg_eval.scoring import call_evaluators, raise_first

AnyPregel = Pregel[Any, Any, Any, Any]

GRAPHS_KEY = "lg_eval_graphs"
"""``config["configurable"][GRAPHS_KEY]``: run-time ``{name: compiled graph}`` for targets."""
REVIEW_QUESTION = "Review this evaluation; resume with {'verdict': 'pass' or 'fail', 'note': ...}."


@validated
def create_evaluation_graph(
    evaluators: SkipValidation[Sequence[EvaluatorLike] | EvaluatorLike],
    *,
    threshold: Threshold = None,
    review_threshold: Threshold = None,
    review_on_disagreement: Flag = False,
    checkpointer: SkipValidation[BaseCheckpointSaver[Any] | bool | None] = None,
    graphs: Mapping[str, AnyPregel] | None = None,
    fail_fast: Flag = False,
    name: str = "evaluation",
    langsmith: Flag = False,
    evaluator_timeout: Seconds | None = DEFAULT_TIMEOUT,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled evaluation graph running ``evaluators`` over one case per run.

    Args:
        evaluators: functions following the evaluator convention (sync or
            async), registered names, or :class:`~lg_eval.nodes.EvalSpec`
            objects (key, weight, pass threshold, ``reference_key``).
        threshold: the weighted score must reach it to pass (on top of every
            evaluator's own threshold).
        review_threshold: send the case to a human when the weighted score is
            below it, or when an evaluator failed or gave no score.
        review_on_disagreement: send the case to a human when a judge flags
            ``metadata["needs_review"]`` (its samples disagree).
        checkpointer: as for ``StateGraph.compile``; human review needs one.
        graphs: ``{name: compiled graph}`` for cases given as ``target``
            (``config["configurable"]["lg_eval_graphs"]`` adds or overrides
            names per run).
        fail_fast: let an evaluator's exception fail the run (resumable with
            ``invoke(None, config)``) instead of recording it as an error feedback.
        name: the compiled graph's name.
        langsmith: let its runs be traced to LangSmith as the environment says; by
            default invoking or streaming it sends nothing (:func:`lg_eval.langsmith.offline`).
        evaluator_timeout: seconds each evaluator may take unless its
            :class:`~lg_eval.nodes.EvalSpec` sets ``timeout`` (default 600;
            None: no limit). One still running then is abandoned and its
            result is an :class:`~lg_eval.nodes.EvaluatorTimeoutError`
            feedback (an error: the case fails and goes to review).

    Scores are checked before they count: a NaN, infinite, non-numeric or
    out-of-range score is an error feedback (``passed=None``), so it never
    passes a case, never enters the weighted score and never suppresses review.

    Input: an :class:`EvalCase` (``trajectory`` or ``target``, with optional
    ``reference`` and ``inputs``); output: ``{"result": EvaluationResult}``
    as a dict (validate it with ``EvaluationResult.model_validate``).

    Every evaluator gets the case's whole ``reference``: a multi-field dict
    (``{"trajectory": ..., "tool_calls": ..., "output": ...}``) serves a graph
    judge, a graph match and a tool-call evaluator side by side, each reading
    its own field; ``EvalSpec(fn, reference_key="output")`` hands a custom
    evaluator one part.

    Why a ``target`` names its graph instead of holding it: the input is
    written to the evaluation's checkpoints, and a compiled graph (with its
    checkpointer connection) cannot be serialized, nor would it exist in the
    process that resumes a crashed evaluation. The checkpoint therefore keeps
    ``{"graph": name, "thread_id": ..., "checkpoint_id": ...}``, and the name
    is looked up in the run's ``config["configurable"]["lg_eval_graphs"]``,
    then in ``graphs``, each time ``extract`` runs.
    """
    bound = resolve(evaluators)
    known = dict(graphs or {})

    def extract(state: EvaluationState, config: RunnableConfig) -> Core[dict[str, Any]]:
        state = EvaluationState.model_validate(state)
        if state.target is not None and state.trajectory is not None:
            raise InvalidOptionError("Give the case a trajectory or a target, not both.")
        if state.target is not None:
            graph = _graph_named(state.target.graph, known, config)
            trajectory: Any = yield from extraction(graph, state.target.config())
        elif state.trajectory is not None:
            trajectory = from_plain(state.trajectory)
        else:
            raise InvalidOptionError(
                "The evaluation case has nothing to evaluate: give 'trajectory' (an extracted "
                "trajectory) or 'target' ({'graph': name, 'thread_id': ...})."
            )
        thread_id = state.target.thread_id if state.target is not None else None
        if isinstance(trajectory, ThreadTrajectory):
            thread_id = trajectory.thread_id
        case = {
            "trajectory": to_plain(trajectory),
            "reference": to_plain(state.reference),
            "inputs": state.inputs,
            "thread_id": thread_id,
        }
        consumed = dict.fromkeys(("trajectory", "target", "reference", "inputs"))
        return {**consumed, "case": case, "results": Overwrite([]), "result": None}

    def fan_out(state: EvaluationState) -> list[Send]:
        case = state.case
        assert case is not None
        task = {"trajectory": case.trajectory, "reference": case.reference, "inputs": case.inputs}
        return [Send("evaluate", {"index": i, **task}) for i in range(len(bound))]

    def evaluate(task: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        item = bound[task["index"]]
        call = item.calling(
            {
                "outputs": from_plain(task["trajectory"]),
                "reference_outputs": from_plain(task["reference"]),
                "inputs": task["inputs"],
            },
            evaluator_timeout,
        )
        outcomes = yield call_evaluators([call])
        if fail_fast:
            raise_first(outcomes)
        return {"results": [f.model_dump() for f in to_feedback(item, call, outcomes[0])]}

    def aggregate(state: EvaluationState) -> dict[str, Any]:
        result = summarize(state, threshold, review_threshold, review_on_disagreement)
        return {"result": result.model_dump()}

    def review(state: EvaluationState) -> dict[str, Any]:
        assert state.result is not None
        decision = ask_reviewer(state.result)
        reviewed = Review(**decision.model_dump(), reasons=state.result.reasons)
        result = state.result.model_copy(
            update={"review": reviewed, "passed": decision.verdict == "pass"}
        )
        return {"result": result.model_dump()}

    builder = StateGraph(EvaluationState, input_schema=EvalCase, output_schema=EvaluationOutput)
    builder.add_node("extract", CoreNode(extract, name="extract"))
    builder.add_node("evaluate", CoreNode(evaluate, name="evaluate"))
    builder.add_node("aggregate", aggregate)
    builder.add_node("review", review)
    builder.add_edge(START, "extract")
    builder.add_conditional_edges("extract", fan_out, ["evaluate"])
    builder.add_edge("evaluate", "aggregate")
    builder.add_conditional_edges("aggregate", _needs_review, ["review", END])
    builder.add_edge("review", END)
    graph = builder.compile(checkpointer=checkpointer, name=name)
    if not langsmith:
        graph.__class__ = OfflineGraph  # same state, its runs wrapped in offline()
    return graph


class OfflineGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled graph whose every run (invoke, stream and their async forms) is offline.

    ``invoke`` and ``ainvoke`` run through ``stream`` and ``astream``, so wrapping those
    two covers all four; copies made by LangGraph (``with_config``, ``copy``) keep the class.
    """

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with offline():
            yield from super().stream(*args, **kwargs)

    async def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        with offline():
            async for chunk in super().astream(*args, **kwargs):
                yield chunk


def summarize(
    state: EvaluationState,
    threshold: float | None,
    review_threshold: float | None,
    review_on_disagreement: bool,
) -> EvaluationResult:
    """Weighted score, verdict and review reasons of the evaluator results."""
    results = list(state.results)
    score = weighted_score(results)
    verdicts = [r.passed for r in results if r.passed is not None]
    failed = [r.key for r in results if r.error is not None]
    passed: bool | None = None
    if verdicts or threshold is not None or failed:
        passed = all(verdicts) and not failed
        if threshold is not None:
            passed = passed and score is not None and score >= threshold
    reasons: list[str] = []
    if review_threshold is not None:
        if failed:
            reasons.append(f"Evaluator error: {', '.join(failed)}.")
        if score is None:
            reasons.append("No evaluator produced a score.")
        elif score < review_threshold:
            reasons.append(f"Score {score:.3g} is below the review threshold {review_threshold:g}.")
    if review_on_disagreement:
        split = [r.key for r in results if (r.metadata or {}).get("needs_review")]
        if split:
            reasons.append(f"Judges disagree: {', '.join(split)}.")
    return EvaluationResult(
        thread_id=state.case.thread_id if state.case is not None else None,
        score=score,
        passed=passed,
        results=results,
        needs_review=bool(reasons),
        reasons=reasons,
    )


def ask_reviewer(result: EvaluationResult) -> ReviewDecision:
    """``interrupt()`` with the case until the reviewer answers with a valid decision."""
    payload: dict[str, Any] = {
        "question": REVIEW_QUESTION,
        **result.model_dump(include={"thread_id", "score", "passed", "reasons", "results"}),
    }
    while True:
        answer = interrupt(payload)
        try:
            return ReviewDecision.model_validate(answer)
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            payload = {**payload, "error": f"Invalid review answer {answer!r}: {problem}."}


def _needs_review(state: EvaluationState) -> str:
    return "review" if state.result is not None and state.result.needs_review else END


def _graph_named(name: str, known: Mapping[str, AnyPregel], config: RunnableConfig) -> AnyPregel:
    per_run: Mapping[str, AnyPregel] = (config.get("configurable") or {}).get(GRAPHS_KEY) or {}
    graph = per_run.get(name, known.get(name))
    if graph is None:
        names = sorted({*known, *per_run})
        raise InvalidOptionError(
            f"No graph named {name!r} to extract the target thread from (known: "
            f"{', '.join(names) or 'none'}). Pass create_evaluation_graph(graphs={{{name!r}: "
            f"graph}}) or config['configurable'][{GRAPHS_KEY!r}] = {{{name!r}: graph}}."
        )
    return graph
