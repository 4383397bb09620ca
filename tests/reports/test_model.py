"""build_report computes every aggregate once; these are the exact values for the fixtures."""

from __future__ import annotations

import pytest

from lg_eval.experiments import ExperimentRun, percentile
from lg_eval.reports import Histogram, build_report
from lg_eval.reports._model import Bins, change_counts, changed, kind_label
from lg_eval.reports._text import diff_turn, value_text
from tests.reports.conftest import JUDGE, RUN_ID, STRICT


def histogram(label: str, values: list[float], *, zero: bool = False) -> Histogram:
    """The bins both paths use, over ``values``."""
    return Bins.spanning(min(values), max(values), zero=zero).binned(label, values)


def test_status_counts_and_pass_rates(support_run: ExperimentRun) -> None:
    summary = build_report(support_run).summary
    assert (summary.results, summary.cases, summary.k) == (7, 6, 2)
    assert summary.counts.model_dump() == {"passed": 3, "failed": 2, "error": 1, "timeout": 1}
    assert summary.pass_rate == pytest.approx(3 / 7)
    assert summary.pass_at_k == pytest.approx(3 / 6)  # refund-happy passed once of two
    assert summary.pass_hat_k == pytest.approx(2 / 6)  # cancel-order, faq-shipping


def test_latency_percentiles_interpolate_linearly(support_run: ExperimentRun) -> None:
    summary = build_report(support_run).summary
    # sorted: 0.6 0.8 1.0 1.2 3.4 5.0 30.0
    assert summary.latency_p50_s == pytest.approx(1.2)
    assert summary.latency_p95_s == pytest.approx(5.0 + 0.7 * 25.0)
    assert summary.latency_mean_s == pytest.approx(42.0 / 7)
    assert summary.latency_max_s == 30.0


def test_tokens_cost_calls_and_retries_are_summed(support_run: ExperimentRun) -> None:
    summary = build_report(support_run).summary
    assert summary.tokens == 3700
    assert summary.cost == pytest.approx(0.021)
    assert summary.model_calls == 15
    assert summary.retries == 1


def test_per_evaluator_verdicts_and_score_statistics(support_run: ExperimentRun) -> None:
    evaluators = {e.key: e for e in build_report(support_run).evaluators}
    assert list(evaluators) == [STRICT, JUDGE, "tool_args_match", "response_similarity"]
    strict = evaluators[STRICT]
    assert (strict.rows, strict.passed, strict.failed, strict.pass_rate) == (5, 3, 2, 0.6)
    assert (strict.mean, strict.min, strict.max) == (pytest.approx(0.6), 0.0, 1.0)
    judge = evaluators[JUDGE]
    assert (judge.passed, judge.failed, judge.pass_rate) == (2, 2, 0.5)
    assert (judge.mean, judge.min, judge.max) == (pytest.approx(0.65), 0.4, 0.9)
    similarity = evaluators["response_similarity"]
    assert (similarity.no_verdict, similarity.pass_rate, similarity.mean) == (1, None, 0.75)


def test_per_tag_counts(support_run: ExperimentRun) -> None:
    tags = {
        t.tag: (t.counts.total, t.counts.passed, t.pass_rate)
        for t in build_report(support_run).tags
    }
    assert tags == {
        "hitl": (2, 0, 0.0),
        "orders": (2, 1, 0.5),
        "refunds": (3, 1, pytest.approx(1 / 3)),
        "search": (1, 0, 0.0),
        "smoke": (3, 2, pytest.approx(2 / 3)),
    }


def test_failures_list_every_result_that_did_not_pass(support_run: ExperimentRun) -> None:
    failures = build_report(support_run).failures
    assert [(c.label, c.result.status) for c in failures] == [
        ("refund-over-limit", "failed"),
        ("address-change", "error"),
        ("slow-search", "timeout"),
        ("refund-happy#1", "failed"),
    ]


def test_failed_case_diff_marks_the_first_differing_step_per_turn(
    support_run: ExperimentRun,
) -> None:
    case = build_report(support_run).cases[1]
    first, second = case.diff
    assert first.match and first.reason is None
    assert not second.match
    assert second.first_difference == 1
    assert (second.missing, second.unexpected) == (["refund"], [])
    assert [s.name for s in second.expected if s.differs] == ["refund"]
    assert [s.name for s in second.actual if s.differs] == []
    assert second.reason == "step 2: expected 'refund', got 'respond'"


def test_diff_falls_back_to_graph_match_metadata(support_run: ExperimentRun) -> None:
    result = support_run.results[1]
    metadata = {"reference": result.expected_trajectory, "actual": result.trajectory}
    scores = [result.scores[0].model_copy(update={"metadata": metadata}), result.scores[1]]
    bare = result.model_copy(
        update={"trajectory": None, "expected_trajectory": None, "scores": scores}
    )
    run = support_run.model_copy(update={"results": [bare]})
    assert build_report(run).cases[0].diff[1].missing == ["refund"]


def test_unexpected_steps_are_marked_on_the_actual_side() -> None:
    turn = diff_turn(0, ["a", "b"], ["a", "x", "b", "y"])
    assert [s.name for s in turn.actual if s.differs] == ["x", "y"]
    assert (turn.missing, turn.unexpected, turn.first_difference) == ([], ["x", "y"], 1)


def test_played_turns_and_interrupts_are_kept_verbatim_and_shown_as_text(
    support_run: ExperimentRun,
) -> None:
    case = build_report(support_run).cases[1]
    assert case.result is support_run.results[1]  # the stored result itself, not a copy
    turns = case.result.turns
    assert [(t.kind, t.sent) for t in turns] == [
        (
            "input",
            {"messages": [{"role": "user", "content": "Refund order 1042, it arrived broken"}]},
        ),
        ("resume", {"approved": True}),
    ]
    assert [(kind_label(t), value_text(t.sent)) for t in turns] == [
        (
            "input",
            '{"messages": [{"role": "user", "content": "Refund order 1042, it arrived broken"}]}',
        ),
        ("resume", '{"approved": true}'),
    ]
    (asked,) = turns[0].asked
    assert (asked["id"], asked["path"]) == ("int-7", "human_review")
    assert asked["value"] == {"question": "Approve a refund of $250 for order 1042?"}
    assert value_text(asked["value"]) == '{"question": "Approve a refund of $250 for order 1042?"}'


def test_judge_reasoning_is_the_comment_of_judge_feedback(support_run: ExperimentRun) -> None:
    case = build_report(support_run).cases[1]
    assert [(n.key, n.comment) for n in case.judge_notes] == [
        (JUDGE, "The reviewer approved, yet the agent answered without refunding.")
    ]
    assert [line.key for line in case.failing_checks] == [STRICT]


def test_trend_keeps_the_same_dataset_oldest_first(
    support_run: ExperimentRun, history: list[ExperimentRun]
) -> None:
    trend = build_report(support_run, history=history).trend
    assert [(p.run_id, p.pass_rate, p.current) for p in trend] == [
        ("run-0301", 0.5, False),
        ("run-0302", 0.6, False),
        ("run-0303", 0.8, False),
        (RUN_ID, pytest.approx(3 / 7), True),
    ]


def test_no_history_no_trend(support_run: ExperimentRun) -> None:
    assert build_report(support_run).trend == []


def test_comparison_is_read_grouped_by_change(support_run: ExperimentRun, comparison) -> None:
    kept = build_report(support_run, comparison=comparison).comparison
    assert kept == comparison  # as compare_runs made it
    assert [(c.case_id, c.change) for c in changed(comparison)] == [
        ("refund-over-limit", "regressed"),
        ("faq-shipping", "improved"),
        ("slow-search", "added"),
        ("legacy-greeting", "removed"),
    ]
    assert change_counts(comparison) == {
        "regressed": 1,
        "improved": 1,
        "added": 1,
        "removed": 1,
        "unchanged": 1,
    }


def test_histograms_bin_scores_on_the_unit_interval_and_latency_from_zero(
    support_run: ExperimentRun,
) -> None:
    report = build_report(support_run)
    # numeric (non-bool) scores: 0.9 0.4 0.8 1.0 0.75 0.5
    assert report.score_histogram.counts == [0, 0, 0, 0, 1, 1, 0, 1, 1, 2]
    assert (report.latency_histogram.lo, report.latency_histogram.hi) == (0.0, 30.0)
    assert report.latency_histogram.counts == [4, 2, 0, 0, 0, 0, 0, 0, 0, 1]


def test_empty_run_has_no_rates() -> None:
    from tests.reports.conftest import T0, info

    report = build_report(ExperimentRun(info=info("empty", T0)))
    assert report.summary.pass_rate is None
    assert report.summary.latency_p50_s is None
    assert report.score_histogram.counts == [0] * 10


def test_percentile_and_histogram_edges() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert histogram("x", [2.0, 2.0]).counts[0] == 0  # a single value gets a width
    assert sum(histogram("x", [2.0, 2.0]).counts) == 2


def test_every_finite_span_is_binned_however_narrow_or_wide() -> None:
    # a span too narrow to divide into ten bins is widened as a single value is
    tiny = histogram("latency (s)", [5e-324, 0.0], zero=True)
    assert (tiny.lo, tiny.hi, tiny.counts) == (0.0, 1.0, [2] + [0] * 9)
    narrow = histogram("x", [5e-324, 1e-323])
    assert (narrow.lo, narrow.hi, sum(narrow.counts)) == (5e-324 - 0.5, 1e-323 + 0.5, 2)
    # a span wider than the largest float (its difference overflows) still has ten bins
    wide = histogram("x", [-1.7e308, 0.0, 1.0e308, 1.7e308])
    assert (wide.lo, wide.hi) == (-1.7e308, 1.7e308)
    # bins of 3.4e307: 0 is 1.7e308 from the bottom (bin 5), 1e308 is 2.7e308 (bin 7)
    assert wide.counts == [1, 0, 0, 0, 0, 1, 0, 1, 0, 1]
