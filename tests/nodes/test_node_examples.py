"""The EvalNode and evaluation-graph examples run end to end and print exactly this."""

from __future__ import annotations

from examples import review_queue, self_checking_agent

SELF_CHECK_OUTPUT = """\
Turn 1: 2 evaluation result(s)
  [turn 1, step 2] tool_selection_accuracy = 0.0 (FAILED) - Expected tools not used: get_weather.
  [turn 1, step 2] argument_precision = 0.0 (FAILED) - Arguments below 1.0: get_weather not called.
  paused for a human: 'Tell me the weather for sf'
Turn 2: 2 evaluation result(s)
  [turn 2, step 7] tool_selection_accuracy = 1.0 (passed)
  [turn 2, step 7] argument_precision = 1.0 (passed)
Answer: The weather in sf is sunny and 75 degrees.
Trajectory:
  turn 1: __start__ -> agent -> check -> revise -> agent -> tools -> __interrupt__
  turn 2: agent -> check -> respond
"""

REVIEW_QUEUE_OUTPUT = """\
Evaluating (at most 2 threads at a time):
  review:email_agent:inbox-careful       done    score=1.00  passed=True
  review:email_agent:inbox-careless      review  score=0.50  passed=False
    needs review: Score 0.5 is below the review threshold 0.9.
  review:email_agent:inbox-two-requests  done    score=1.00  passed=True
Reviewer on review:email_agent:inbox-careless: {'verdict': 'fail', 'note': \
'Replied to Bob without reading the inbox first.'}
Batch again (finished evaluations are not run twice):
  review:email_agent:inbox-careful       done    score=1.00  passed=True
  review:email_agent:inbox-careless      done    score=0.50  passed=False
    reviewed: fail (Replied to Bob without reading the inbox first.)
  review:email_agent:inbox-two-requests  done    score=1.00  passed=True
Evaluation thread review:email_agent:inbox-careless, as lg_eval extracts it:
  turn 1: __start__ -> extract -> evaluate -> evaluate -> aggregate -> review -> __interrupt__
  turn 2: (the resumed review only)
"""


def test_self_checking_agent_revises_once_then_answers(tmp_path, capsys):
    state = self_checking_agent.main(tmp_path / "self_check.sqlite")
    assert capsys.readouterr().out == SELF_CHECK_OUTPUT
    assert [(r["turn"], r["key"], r["passed"]) for r in state["evaluations"]] == [
        (0, "tool_selection_accuracy", False),
        (0, "argument_precision", False),
        (1, "tool_selection_accuracy", True),
        (1, "argument_precision", True),
    ]


def test_review_queue_pauses_on_the_low_score_and_records_the_verdict(tmp_path, capsys):
    results = review_queue.main(tmp_path / "review_queue.sqlite")
    assert capsys.readouterr().out == REVIEW_QUEUE_OUTPUT
    assert [(r.thread_id, r.passed, r.review and r.review.verdict) for r in results] == [
        ("inbox-careful", True, None),
        ("inbox-careless", False, "fail"),
        ("inbox-two-requests", True, None),
    ]
