"""In ``langsmith.evaluate``, one evaluator raising on one row does not drop the summary.

The user's case: a strict evaluator of their own that raises on the one row it cannot
judge. LangSmith records that row's error; lg_eval's summary still summarises every
key over the other rows, counts the errored row apart (naming the error) and does not pass
it, as ``lg-eval run`` counts an errored case.
"""

from __future__ import annotations

from typing import Any

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.evaluators import graph_trajectory_strict_match
from lg_eval.langsmith import mean_score, pass_rate
from tests.langsmith.helpers import evaluate_weather


def _says_degrees(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
    """Whether the answer gives degrees; it cannot judge (raises) when the expectation asks
    about rain, which only the regression demo's row does."""
    if "rain" in str(reference_outputs):
        raise ValueError("cannot judge a rain forecast")
    return Feedback(score="degrees" in str(outputs["output"]))


says_degrees = make_evaluator("says_degrees", _says_degrees)


def test_an_evaluator_raising_on_one_row_leaves_the_summary_whole() -> None:
    evaluators = [graph_trajectory_strict_match, says_degrees]
    results, _ = evaluate_weather(evaluators, [pass_rate(*evaluators), mean_score(*evaluators)])
    summary = [(r.key, r.score, r.comment) for r in results._summary_results["results"]]
    error = "ValueError: cannot judge a rain forecast"
    assert summary == [
        ("graph_trajectory_strict_match:pass_rate", 2 / 3, "2 of 3 passed"),
        ("says_degrees:pass_rate", 1.0, f"2 of 2 passed; 1 errored ({error})"),
        # the row that errored is also the one whose trajectory failed: errored wins
        ("pass_rate", 2 / 3, "2 of 3 rows passed, 0 failed, 0 no verdict, 1 errored"),
        ("graph_trajectory_strict_match:mean", 2 / 3, "mean of 3 scores"),
        ("says_degrees:mean", 1.0, f"mean of 2 scores; 1 errored ({error})"),
    ]
