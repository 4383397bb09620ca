"""In ``langsmith.evaluate`` a no-verdict is counted apart, never as a pass.

The user's case: ``hitl_match`` on threads that never interrupt, against references
naming no interrupt, so it gives no score on every row. The row feedback says so, and
lg_eval's summary counts the rows as the runner counts cases.
"""

from __future__ import annotations

from typing import Any

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import get_evaluator, graph_trajectory_strict_match
from lg_eval.langsmith import pass_rate
from tests.langsmith.helpers import evaluate_weather

HITL = get_evaluator("hitl_match")


def run(evaluators: list[Any], **options: Any) -> tuple[dict[str, Any], list[Any]]:
    """The weather golden through ``evaluate`` offline: row feedback by case, and summary."""
    results, rows = evaluate_weather(evaluators, [pass_rate(*evaluators, **options)])
    feedback = {
        row["example"].metadata["case_id"]: {
            r.key: r.score for r in row["evaluation_results"]["results"]
        }
        for row in rows
    }
    summary = [(r.key, r.score, r.comment) for r in results._summary_results["results"]]
    return feedback, summary


def test_hitl_match_alone_gives_no_verdict_and_no_row_passes() -> None:
    feedback, summary = run([HITL])
    assert [row["hitl_match"] for row in feedback.values()] == [None, None, None]
    assert summary == [
        ("hitl_match:pass_rate", None, "0 of 0 passed; 3 no verdict"),
        ("pass_rate", 0.0, "0 of 3 rows passed, 0 failed, 3 no verdict"),
    ]


def test_a_no_verdict_beside_a_verdict_is_neither_pass_nor_fail() -> None:
    feedback, summary = run([HITL, graph_trajectory_strict_match])
    trajectory = [row["graph_trajectory_strict_match"] for row in feedback.values()]
    assert trajectory == [True, True, False]  # the regression demo runs a second turn
    assert summary == [
        ("hitl_match:pass_rate", None, "0 of 0 passed; 3 no verdict"),
        ("graph_trajectory_strict_match:pass_rate", 2 / 3, "2 of 3 passed"),
        ("pass_rate", 2 / 3, "2 of 3 rows passed, 1 failed, 0 no verdict"),
    ]


def test_require_verdict_fails_the_rows_without_one() -> None:
    _, summary = run([HITL, graph_trajectory_strict_match], require_verdict=True)
    assert summary[-1] == ("pass_rate", 0.0, "0 of 3 rows passed, 1 failed, 2 no verdict")


def test_require_verdict_takes_a_bool() -> None:
    with pytest.raises(
        InvalidOptionError, match=r"require_verdict='yes': input should be a valid boolean"
    ):
        pass_rate(HITL, require_verdict="yes")  # type: ignore[arg-type]
