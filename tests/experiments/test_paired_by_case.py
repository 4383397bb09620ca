"""compare_runs' pooled tests: over the pairs without repetitions (the tests as they were),
paired by case with repetitions; the per-case tests over each case's repetitions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from lg_eval.experiments import CaseResult, ExperimentRun, ScoreRow, compare_runs
from lg_eval.stats import mcnemar_test, wilcoxon_test
from tests.reports.conftest import T0, info

Drawn = dict[tuple[str, int], tuple[bool, bool, float]]


def run(run_id: str, drawn: Drawn) -> ExperimentRun:
    """Results of (case, repetition): passed or not, a boolean and a numeric score."""
    results = [
        CaseResult(
            run_id=run_id,
            case_id=case_id,
            repetition=repetition,
            status="passed" if passed else "failed",
            scores=[
                ScoreRow(evaluator="strict", key="strict", score=strict, passed=strict),
                ScoreRow(evaluator="judge", key="judge", score=judged),
            ],
        )
        for (case_id, repetition), (passed, strict, judged) in drawn.items()
    ]
    return ExperimentRun(info=info(run_id, T0), results=results)


outcome = st.tuples(st.booleans(), st.booleans(), st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]))
cases = st.lists(st.text("abcdefgh", min_size=1, max_size=3), min_size=1, max_size=10, unique=True)


def pooled(tests: list[Any]) -> dict[str | None, Any]:
    return {t.key: t for t in tests if t.case_id is None}


def paired(a: ExperimentRun, b: ExperimentRun, read: Any) -> list[tuple[Any, Any]]:
    in_b = {(r.case_id, r.repetition): r for r in b.results}
    return [(read(r), read(in_b[(r.case_id, r.repetition)])) for r in a.results]


def status(result: CaseResult) -> bool:
    return result.status == "passed"


def score(key: str) -> Any:
    return lambda result: next(row.score for row in result.scores if row.key == key)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=cases, data=st.data())
def test_without_repetitions_the_pooled_tests_are_the_tests_over_the_pairs(
    ids: list[str], data: st.DataObject
) -> None:
    a = run("a", {(c, 0): data.draw(outcome) for c in ids})
    b = run("b", {(c, 0): data.draw(outcome) for c in ids})
    tests = pooled(compare_runs(a, b).tests)
    assert list(tests) == [None, "strict", "judge"]
    assert tests[None] == mcnemar_test(paired(a, b, status))
    assert tests["strict"] == mcnemar_test(paired(a, b, score("strict")), key="strict")
    assert tests["judge"] == wilcoxon_test(paired(a, b, score("judge")), key="judge")


def durkalski(a: ExperimentRun, b: ExperimentRun, read: Any) -> float:
    """Per case, Σ(B − A) over its repetitions; (Σd)²/Σd² against χ²(1)."""
    d: dict[str, float] = {}
    in_b = {(r.case_id, r.repetition): r for r in b.results}
    for r in a.results:
        d[r.case_id] = d.get(r.case_id, 0.0) + float(read(in_b[(r.case_id, r.repetition)]))
        d[r.case_id] -= float(read(r))
    squares = sum(x * x for x in d.values())
    return 1.0 if not squares else float(scipy_stats.chi2.sf(sum(d.values()) ** 2 / squares, 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=cases.filter(lambda ids: len(ids) >= 2), repetitions=st.integers(2, 4), data=st.data())
def test_with_repetitions_the_pooled_tests_pair_by_case(
    ids: list[str], repetitions: int, data: st.DataObject
) -> None:
    keys = [(c, r) for c in ids for r in range(repetitions)]
    a = run("a", {key: data.draw(outcome) for key in keys})
    b = run("b", {key: data.draw(outcome) for key in keys})
    comparison = compare_runs(a, b)
    tests = pooled(comparison.tests)
    assert [t.test for t in tests.values()] == [
        "clustered_mcnemar",
        "clustered_mcnemar",
        "clustered_difference",
    ]
    for key, read in ((None, status), ("strict", score("strict")), ("judge", score("judge"))):
        pairs = paired(a, b, read)
        test = tests[key]
        assert test.pairs == len(keys)
        assert test.effect == pytest.approx(sum(float(y) - float(x) for x, y in pairs) / len(keys))
        assert test.p_value == pytest.approx(durkalski(a, b, read), rel=1e-9, abs=1e-300)
    # each case's own test is still over its repetitions
    for case in ids:
        own = next(t for t in comparison.tests if t.case_id == case and t.key is None)
        pairs = [(status(x), status(y)) for x, y in zip(
            [r for r in a.results if r.case_id == case],
            [r for r in b.results if r.case_id == case],
            strict=True,
        )]  # fmt: skip
        assert own.test == "mcnemar" and own.p_value == mcnemar_test(pairs).p_value
