"""The one scoring step: evaluators called on one set of arguments, their results read.

Every host that scores (a golden case in an experiment, a swept or replayed thread, an eval
node inside a graph, the evaluation graph) goes through the same two functions:

* :func:`call_evaluators`: each :class:`EvaluatorCall` called with its keyword arguments, one
  after another when driven sync and together when awaited (one per-call core,
  :func:`lg_eval._effects.drive` / :func:`~lg_eval._effects.adrive`), each within its own
  timeout and all within one budget; an evaluator that raises yields an error outcome, while
  LangGraph's control flow (``interrupt()``) propagates.
* :func:`read_outcome`: what one evaluator returned (a feedback dict, a list of them, a
  LangSmith ``{"results": [...]}``, a pydantic model or a bare score) as :class:`Scored`
  feedback, held to the one range rule (:func:`lg_eval._feedback.check_score`) against the
  ranges the evaluator declares; it never raises: garbage is that evaluator's error.

What differs between hosts is only the record each writes: a results-store row
(:mod:`lg_eval.experiments`), or a feedback record in graph state (:mod:`lg_eval.nodes`).
Both take the pass/fail verdict from :func:`lg_eval._feedback.verdict`.
"""

from lg_eval.scoring._calls import (
    DeclaredRanges,
    EvaluatorCall,
    Outcome,
    Scored,
    call_evaluators,
    raise_first,
    read_outcome,
    reference_part,
    run_blocking,
)

__all__ = [
    "DeclaredRanges",
    "EvaluatorCall",
    "Outcome",
    "Scored",
    "call_evaluators",
    "raise_first",
    "read_outcome",
    "reference_part",
    "run_blocking",
]
