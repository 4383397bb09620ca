"""Runs for the report tests, built directly from the result models.

``support_run``: a support-bot dataset, 6 cases and 7 results (one case repeated):
3 passed, 2 failed (one with a differing trajectory in its second turn, after a played
human review), 1 error, 1 timeout; graph match, an LLM judge with reasoning, a tool
check and an unthresholded similarity. ``history``: 3 earlier runs of the same dataset
and one of another. ``comparison``: this run against the last stored one.
``hostile_run``: one case whose every text field carries an injection payload.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lg_eval.experiments import (
    CaseChange,
    CaseResult,
    Comparison,
    ExperimentRun,
    PlayedTurnRecord,
    RunInfo,
    ScoreRow,
)

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
RUN_ID = "run-0304"
DATASET = "support-bot"
JUDGE_META: dict[str, Any] = {"model": "scripted", "usage": {"input_tokens": 120}}
STRICT = "graph_trajectory_strict_match"
JUDGE = "trajectory_accuracy"


def info(run_id: str, started: datetime, dataset: str = DATASET, **extra: Any) -> RunInfo:
    return RunInfo(
        run_id=run_id,
        dataset=dataset,
        dataset_hash="a3f1c0de9b7e44aa",
        target="support_bot.graph:build",
        checkpointer="sqlite:///tmp/checkpoints.sqlite",
        config={"repetitions": 1, "timeout": 30},
        git_commit="fd197ed",
        started_at=started,
        finished_at=started + timedelta(minutes=2),
        status="finished",
        **extra,
    )


def strict(passed: bool, comment: str | None = None) -> ScoreRow:
    return ScoreRow(evaluator=STRICT, key=STRICT, score=passed, passed=passed, comment=comment)


def judge(score: float, comment: str) -> ScoreRow:
    return ScoreRow(
        evaluator="trajectory_judge",
        key=JUDGE,
        score=score,
        passed=score >= 0.7,
        comment=comment,
        metadata=JUDGE_META,
    )


def result(case_id: str, status: str, **fields: Any) -> CaseResult:
    return CaseResult.model_validate(
        {"run_id": RUN_ID, "case_id": case_id, "status": status, **fields}
    )


REFUND_EXPECTED = [["classify", "lookup_order", "human_review"], ["approve", "refund", "respond"]]
REFUND_ACTUAL = [["classify", "lookup_order", "human_review"], ["approve", "respond"]]
REFUND_TURNS = [
    PlayedTurnRecord(
        index=0,
        kind="input",
        sent={"messages": [{"role": "user", "content": "Refund order 1042, it arrived broken"}]},
        asked=[
            {
                "id": "int-7",
                "path": "human_review",
                "value": {"question": "Approve a refund of $250 for order 1042?"},
            }
        ],
    ),
    PlayedTurnRecord(index=1, kind="resume", sent={"approved": True}, asked=[]),
]


def support_results() -> list[CaseResult]:
    return [
        result(
            "refund-happy",
            "passed",
            tags=["refunds", "smoke"],
            scores=[strict(True), judge(0.9, "Looked up the order before refunding.")],
            trajectory=[["classify", "refund", "respond"]],
            expected_trajectory=[["classify", "refund", "respond"]],
            latency_s=1.2,
            tokens=800,
            cost=0.004,
            model_calls=3,
        ),
        result(
            "refund-over-limit",
            "failed",
            tags=["refunds", "hitl"],
            scores=[
                strict(False, "Turn 2: step 2 differs: expected 'refund', got 'respond'."),
                judge(0.4, "The reviewer approved, yet the agent answered without refunding."),
            ],
            trajectory=REFUND_ACTUAL,
            expected_trajectory=REFUND_EXPECTED,
            turns=REFUND_TURNS,
            latency_s=3.4,
            tokens=1500,
            cost=0.009,
            model_calls=5,
        ),
        result(
            "cancel-order",
            "passed",
            tags=["orders"],
            scores=[strict(True), judge(0.8, "Cancelled after confirming the order id.")],
            latency_s=0.8,
            tokens=300,
            cost=0.002,
            model_calls=2,
        ),
        result(
            "address-change",
            "error",
            tags=["orders", "hitl"],
            error="GraphRecursionError: Recursion limit of 25 reached without a stop condition",
            latency_s=5.0,
            attempts=2,
        ),
        result(
            "slow-search",
            "timeout",
            tags=["search"],
            error="timed out after 30s",
            latency_s=30.0,
        ),
        result(
            "faq-shipping",
            "passed",
            tags=["smoke"],
            scores=[
                strict(True),
                ScoreRow(
                    evaluator="tool_args_match", key="tool_args_match", score=1.0, passed=True
                ),
                ScoreRow(evaluator="text_similarity", key="response_similarity", score=0.75),
            ],
            latency_s=0.6,
            tokens=200,
            cost=0.001,
            model_calls=1,
        ),
        result(
            "refund-happy",
            "failed",
            repetition=1,
            tags=["refunds", "smoke"],
            scores=[
                strict(False, "Expected 1 turns, got 2."),
                judge(0.5, "Asked twice for the order id."),
            ],
            latency_s=1.0,
            tokens=900,
            cost=0.005,
            model_calls=4,
        ),
    ]


def make_support_run() -> ExperimentRun:
    return ExperimentRun(info=info(RUN_ID, T0 + timedelta(days=3)), results=support_results())


@pytest.fixture
def support_run() -> ExperimentRun:
    return make_support_run()


def _past(run_id: str, day: int, statuses: list[str], dataset: str = DATASET) -> ExperimentRun:
    return ExperimentRun(
        info=info(run_id, T0 + timedelta(days=day), dataset=dataset),
        results=[
            CaseResult(run_id=run_id, case_id=f"c{n}", status=s)  # type: ignore[arg-type]
            for n, s in enumerate(statuses)
        ],
    )


@pytest.fixture
def history() -> list[ExperimentRun]:
    return make_history()


def make_history() -> list[ExperimentRun]:
    return [
        _past("run-0302", 1, ["passed", "passed", "passed", "failed", "failed"]),
        _past("run-0301", 0, ["passed", "passed", "failed", "error"]),
        _past("other-dataset", 2, ["failed"], dataset="billing-bot"),
        _past("run-0303", 2, ["passed", "passed", "passed", "passed", "failed"]),
    ]


@pytest.fixture
def comparison() -> Comparison:
    return make_comparison()


def make_comparison() -> Comparison:
    return Comparison(
        run_a="run-0303",
        run_b=RUN_ID,
        tolerance=0.05,
        cases=[
            CaseChange(
                case_id="refund-over-limit",
                change="regressed",
                status_a="passed",
                status_b="failed",
                score_deltas={STRICT: -1.0, JUDGE: -0.5},
                latency_delta_s=0.9,
            ),
            CaseChange(
                case_id="faq-shipping",
                change="improved",
                status_a="failed",
                status_b="passed",
                score_deltas={STRICT: 1.0},
                latency_delta_s=-0.2,
            ),
            CaseChange(
                case_id="cancel-order", change="unchanged", status_a="passed", status_b="passed"
            ),
            CaseChange(case_id="slow-search", change="added", status_b="timeout"),
            CaseChange(case_id="legacy-greeting", change="removed", status_a="passed"),
        ],
        evaluator_deltas={STRICT: -0.15, JUDGE: -0.05},
        pass_rate_a=0.8,
        pass_rate_b=3 / 7,
        latency_p50_delta_s=0.2,
        cost_delta=0.004,
    )


# --------------------------------------------------------------------------- hostile content

MARK = (
    "document.title='PWNED';"
    "document.documentElement.setAttribute('data-pwned','1');"
    "window.__pwned=1"
)
PAYLOAD = (
    f"<script>{MARK}</script>"
    f'</script><img src=x onerror="{MARK}">'
    f'"><svg onload="{MARK}">'
    "' onmouseover='x' "
    "[link=http://evil.example]click[/link] [bold red]loud[/bold red] "
    "\x1b[31mRED\x1b[0m \x1b]8;;http://x\x07osc-link\x1b]8;;\x07 "
    "a|b\nsecond line\r\n"
    "]]> <!-- -->\x00\x08\x0b\x7f\u2028\u202e"
)
HOSTILE_ID = f"case{PAYLOAD}"
HOSTILE_TAG = f"tag{PAYLOAD}"


@pytest.fixture
def hostile_run() -> ExperimentRun:
    return make_hostile_run()


def make_hostile_run() -> ExperimentRun:
    hostile = CaseResult(
        run_id="run-hostile",
        case_id=HOSTILE_ID,
        status="failed",
        tags=[HOSTILE_TAG, "plain"],
        scores=[
            ScoreRow(
                evaluator=STRICT,
                key=STRICT,
                score=False,
                passed=False,
                comment=f"comment{PAYLOAD}",
            ),
            ScoreRow(
                evaluator="trajectory_judge",
                key=JUDGE,
                score=0.1,
                passed=False,
                comment=f"judge{PAYLOAD}",
                metadata=JUDGE_META,
            ),
        ],
        trajectory=[["classify", f"tool{PAYLOAD}"]],
        expected_trajectory=[["classify", "refund"]],
        output=f"said{PAYLOAD}",
        expected_output={"contains": [f"keyword{PAYLOAD}"]},
        answers=[f"first{PAYLOAD}", f"said{PAYLOAD}"],
        turns=[
            PlayedTurnRecord(
                index=0,
                kind="input",
                sent={
                    "messages": [
                        {
                            "role": "user",
                            "content": f"input{PAYLOAD}",
                            "tool_calls": [{"name": "refund", "args": {"note": f"args{PAYLOAD}"}}],
                        }
                    ]
                },
                asked=[{"id": "int-1", "path": "review", "value": {"q": f"interrupt{PAYLOAD}"}}],
            ),
            PlayedTurnRecord(index=1, kind="resume", sent=f"resume{PAYLOAD}"),
        ],
        error=None,
        latency_s=1.5,
    )
    plain = CaseResult(run_id="run-hostile", case_id="plain-case", status="passed", tags=["plain"])
    errored = CaseResult(
        run_id="run-hostile",
        case_id="error-case",
        status="error",
        error=f"error{PAYLOAD}",
    )
    return ExperimentRun(
        info=info("run-hostile", T0, dataset="support-hostile").model_copy(
            update={"target": f"target{PAYLOAD}"}
        ),
        results=[hostile, plain, errored],
    )
