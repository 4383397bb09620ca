"""The done-when scenario: a seeded flaky graph, 5 cases × 10 repetitions per version.

0.8 against 0.75 is noise: some case passed in A and failed in B (the plain gate fails),
but no paired test finds it significant, so ``--fail-on significant-regression`` passes.
0.9 against 0.3 is a real drop, and both gates fail. With repetitions the pooled tests pair
by case (the clustered McNemar test) and the pass rate's interval counts cases.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scipy_stats
from typer.testing import CliRunner

from lg_eval import compare_runs, run_experiment
from lg_eval.cli import app
from lg_eval.cli._common import GATE_FAILED, PASSED
from lg_eval.experiments import ExperimentRun
from tests.stats.flaky import dataset, flaky

STRICT = "graph_trajectory_strict_match"


def _run(store: str, run_id: str, p: float, seed: int) -> ExperimentRun:
    return run_experiment(
        flaky(p, seed), dataset(), checkpointer="memory://", store=store, run_id=run_id,
        repetitions=10, judge_cache=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('flaky') / 'results.sqlite'}"
    _run(url, "close-a", 0.8, 1)
    _run(url, "close-b", 0.75, 2)
    _run(url, "far-a", 0.9, 1)
    _run(url, "far-b", 0.3, 2)
    return url


def _compare(store: str, a: str, b: str, *options: str) -> Any:
    args = ["compare", a, b, "--store", store, "--format", "json", *options]
    return CliRunner().invoke(app, args, catch_exceptions=False)


def _expected_pooled(run_a: ExperimentRun, run_b: ExperimentRun) -> tuple[int, int]:
    """(worse, better) discordant pairs counted straight from the two runs."""
    b = {(r.case_id, r.repetition): r.status == "passed" for r in run_b.results}
    worse = sum(r.status == "passed" and not b[(r.case_id, r.repetition)] for r in run_a.results)
    better = sum(r.status != "passed" and b[(r.case_id, r.repetition)] for r in run_a.results)
    return worse, better


def _durkalski_p(run_a: ExperimentRun, run_b: ExperimentRun) -> float:
    """The clustered McNemar p-value by its definition: per case d = better - worse,
    X² = (Σd)² / Σd² against χ² with one degree of freedom."""
    b = {(r.case_id, r.repetition): r.status == "passed" for r in run_b.results}
    d: dict[str, int] = defaultdict(int)
    for r in run_a.results:
        d[r.case_id] += int(b[(r.case_id, r.repetition)]) - int(r.status == "passed")
    statistic = sum(d.values()) ** 2 / sum(x * x for x in d.values())
    return float(scipy_stats.chi2.sf(statistic, 1))


def test_a_small_drop_over_ten_repetitions_is_not_a_significant_regression(store: str) -> None:
    from lg_eval.experiments import open_store

    with open_store(store) as results:
        a, b = results.load_run("close-a"), results.load_run("close-b")
    comparison = compare_runs(a, b)
    pooled = next(t for t in comparison.tests if t.case_id is None and t.key is None)
    worse, better = _expected_pooled(a, b)
    assert pooled.pairs == 50 and pooled.effect == pytest.approx((better - worse) / 50)
    assert pooled.test == "clustered_mcnemar"
    assert pooled.p_value == pytest.approx(_durkalski_p(a, b), rel=1e-12)
    assert not pooled.significant
    assert comparison.regressed and not comparison.significant_regression
    assert _compare(store, "close-a", "close-b").exit_code == GATE_FAILED
    gated = _compare(store, "close-a", "close-b", "--fail-on", "significant-regression")
    assert gated.exit_code == PASSED
    document = json.loads(gated.stdout)
    assert document["comparison"]["alpha"] == 0.05
    assert document["summary"]["pass_rate_interval"]["method"] == "cluster_wilson"


def test_a_large_drop_is_a_significant_regression_and_fails_both_gates(store: str) -> None:
    from lg_eval.experiments import open_store

    with open_store(store) as results:
        a, b = results.load_run("far-a"), results.load_run("far-b")
    comparison = compare_runs(a, b)
    status = next(t for t in comparison.tests if t.case_id is None and t.key is None)
    strict = next(t for t in comparison.tests if t.case_id is None and t.key == STRICT)
    assert status.regression and strict.regression
    assert status.test == strict.test == "clustered_mcnemar"
    assert status.p_value == pytest.approx(_durkalski_p(a, b), rel=1e-12)
    assert status.p_value < 0.05
    assert comparison.significant_regression
    gated = _compare(store, "far-a", "far-b", "--fail-on", "significant-regression")
    assert gated.exit_code == GATE_FAILED
    assert _compare(store, "far-a", "far-b").exit_code == GATE_FAILED


def test_a_strict_alpha_is_passed_through_to_every_test(store: str) -> None:
    result = _compare(store, "close-a", "close-b", "--alpha", "0.001")
    tests = json.loads(result.stdout)["comparison"]["tests"]
    assert tests and {t["alpha"] for t in tests} == {0.001}


@pytest.mark.parametrize("alpha", ["0", "1", "1.5"])
def test_an_alpha_outside_the_open_unit_interval_is_a_usage_error(store: str, alpha: str) -> None:
    result = _compare(store, "close-a", "close-b", "--alpha", alpha)
    assert result.exit_code == 2


def test_markdown_of_a_comparison_shows_the_paired_tests(store: str, tmp_path: Path) -> None:
    out = tmp_path / "compare.md"
    args = ["compare", "far-a", "far-b", "--store", store, "--format", "md", "-o", str(out)]
    CliRunner().invoke(app, args, catch_exceptions=False)
    text = out.read_text()
    assert "### Paired tests (alpha 0.05)" in text
    assert "| all cases | status | clustered\\_mcnemar | 50 |" in text
    assert "significant regression" in text
