"""Each feedback key of a stored run, counted in SQL: the report's evaluator table.

One grouped pass over the key index gives each key's rows, verdicts, score count, mean and
range; only the errored rows' JSON is read (from their partial index). A key's intervals
are the in-memory report's (:func:`~lg_eval.reports.build_report`), from what SQL sums:
without repetitions, the Wilson interval of its verdicts and, for the mean, the bootstrap
of its scores when it has at most :data:`~lg_eval.stats.BOOTSTRAP_LIMIT` of them (read
whole), else the normal interval from the mean and the sum of squared deviations SQL
computes. With repetitions, its rows grouped by case in SQL give each case's passed rows
and rows with a verdict (the pass rate's interval over cases), and the mean's interval is
taken over cases (each case's total and count, or their moments past that many cases);
memory never holds more than that many rows.
"""

from __future__ import annotations

from typing import Any

from lg_eval.experiments import ResultStore
from lg_eval.reports._model import EvaluatorSummary, rate
from lg_eval.stats import (
    BOOTSTRAP_LIMIT,
    ClusterTotals,
    Interval,
    MeanSample,
    RateMoments,
    clustered_rate_interval,
    resamples_clusters,
    wilson_interval,
)


def evaluator_table(store: ResultStore, run_id: str) -> list[EvaluatorSummary]:
    """One row per feedback key of the run, counted in SQL (see the module), in the order
    the run first gives each key."""
    rows = store.query(
        "SELECT s.key, MIN(s.evaluator), COUNT(*),"
        " SUM(CASE WHEN s.passed = 1 THEN 1 ELSE 0 END),"
        " SUM(CASE WHEN s.passed = 0 THEN 1 ELSE 0 END),"
        " SUM(CASE WHEN s.passed IS NULL THEN 1 ELSE 0 END),"
        " COUNT(s.score), AVG(s.score), MIN(s.score), MAX(s.score), MIN(s.idx)"
        " FROM lg_eval_scores s WHERE s.run_id = ? GROUP BY s.key",
        (run_id,),
    )
    # an errored row has no score: "errors" counts those, "no verdict" the other unjudged
    errored = {
        str(key): (int(n), int(unjudged or 0))
        for key, n, unjudged in store.query(
            "SELECT s.key, COUNT(*), SUM(CASE WHEN s.passed IS NULL THEN 1 ELSE 0 END)"
            f" FROM lg_eval_scores s WHERE s.run_id = ? AND {errored_row(store)}"
            " AND s.score IS NULL GROUP BY s.key",
            (run_id,),
        )
    }
    clusters = _case_moments(store, run_id) if _repeated(store, run_id) else None
    seen = _first_keys(store, run_id)
    rows = sorted(rows, key=lambda row: (seen.get(str(row[0]), len(seen) + row[-1]), row[0]))
    out = []
    for key, evaluator, n, passed, failed, unjudged, scored, mean, low, high, _ in rows:
        passed, failed = int(passed or 0), int(failed or 0)
        errors, unjudged_errors = errored.get(str(key), (0, 0))
        verdicts, (scored_cases, largest) = (
            clusters[str(key)] if clusters is not None else (None, (0, 0))
        )
        if resamples_clusters(scored_cases, largest):
            spread = _clustered_mean(store, run_id, str(key), scored_cases, mean, low, high)
        else:
            sample = _mean_sample(store, run_id, str(key), int(scored), mean, low, high)
            spread = None if sample is None else sample.interval(clustered=False)
        out.append(
            EvaluatorSummary(
                key=str(key),
                evaluator=str(evaluator),
                rows=int(n),
                passed=passed,
                failed=failed,
                errors=errors,
                no_verdict=int(unjudged or 0) - unjudged_errors,
                pass_rate=rate(passed, passed + failed),
                mean=None if mean is None else float(mean),
                min=None if low is None else float(low),
                max=None if high is None else float(high),
                pass_rate_interval=(
                    wilson_interval(passed, passed + failed)
                    if verdicts is None
                    else clustered_rate_interval(verdicts)
                ),
                mean_interval=spread,
            )
        )
    return out


def _repeated(store: ResultStore, run_id: str) -> bool:
    """Whether some case of the run has several results (repetitions): read from the
    case index in case order, stopping at the first such case."""
    return bool(
        store.query(
            "SELECT 1 FROM lg_eval_cases WHERE run_id = ? GROUP BY case_id"
            " HAVING COUNT(*) > 1 LIMIT 1",
            (run_id,),
        )
    )


def _case_moments(
    store: ResultStore, run_id: str
) -> dict[str, tuple[RateMoments, tuple[int, int]]]:
    """Per key, its rows grouped by case in SQL: the :class:`~lg_eval.stats.RateMoments`
    of each case's passed rows out of its rows with a verdict, and ``(cases with a score,
    the most scores of one case)``."""
    rows = store.query(
        "SELECT key, SUM(CASE WHEN v > 0 THEN 1 ELSE 0 END), SUM(p), SUM(v), SUM(p * p),"
        " SUM(p * v), SUM(v * v), MAX(v), SUM(CASE WHEN n > 0 THEN 1 ELSE 0 END), MAX(n)"
        " FROM (SELECT key, case_id, SUM(CASE WHEN passed = 1 THEN 1 ELSE 0 END) AS p,"
        " SUM(CASE WHEN passed IS NULL THEN 0 ELSE 1 END) AS v, COUNT(score) AS n"
        " FROM lg_eval_scores WHERE run_id = ? GROUP BY case_id, key) AS g GROUP BY key",
        (run_id,),
    )
    out = {}
    for key, *counts in rows:
        numbers = [int(value or 0) for value in counts]
        out[str(key)] = (RateMoments(*numbers[:7]), (numbers[7], numbers[8]))
    return out


def _clustered_mean(
    store: ResultStore, run_id: str, key: str, cases: int, mean: Any, low: Any, high: Any
) -> Interval | None:
    """``key``'s mean interval over cases: from each case's total and count when there
    are few enough cases to bootstrap, else from the moments (a second aggregate for the
    squared deviations of the cases' totals from the mean times their counts)."""
    where = "run_id = ? AND key = ? AND score IS NOT NULL"
    if cases <= BOOTSTRAP_LIMIT:
        pairs = store.query(
            f"SELECT SUM(score), COUNT(*) FROM lg_eval_scores WHERE {where} GROUP BY case_id",
            (run_id, key),
        )
        totals = ClusterTotals.from_pairs([(float(y), int(m)) for y, m in pairs])
        return totals.interval(float(low), float(high))
    # in exact decimals on Postgres, as _mean_sample's deviations
    total = "CAST(y AS NUMERIC)" if store.postgres else "y"
    deviation = f"({total} - CAST(? AS NUMERIC) * m)" if store.postgres else "(y - ? * m)"
    ((n, largest, spread),) = store.query(
        f"SELECT SUM(m), MAX(m), SUM({deviation} * {deviation}) FROM (SELECT SUM(score) AS y,"
        f" COUNT(*) AS m FROM lg_eval_scores WHERE {where} GROUP BY case_id) AS g",
        (float(mean), float(mean), run_id, key),
    )
    totals = ClusterTotals.from_moments(
        cases, int(n), float(mean) * int(n), float(spread or 0.0), int(largest)
    )
    return totals.interval(float(low), float(high))


def _mean_sample(
    store: ResultStore, run_id: str, key: str, n: int, mean: Any, low: Any, high: Any
) -> MeanSample | None:
    """The sample behind ``key``'s mean interval: its scores when there are few enough to
    bootstrap, else its moments (a second aggregate for the squared deviations)."""
    if n < 2 or mean is None:
        return None
    where = "run_id = ? AND key = ? AND score IS NOT NULL"
    if n <= BOOTSTRAP_LIMIT:
        sample = MeanSample()
        for (score,) in store.query(
            f"SELECT score FROM lg_eval_scores WHERE {where}", (run_id, key)
        ):
            sample.add(float(score))
        return sample
    # in exact decimals on Postgres, which refuses a product that underflows (a deviation
    # of 1e-170 squared); SQLite rounds it to 0, as Python does
    deviation = "(CAST(score AS NUMERIC) - CAST(? AS NUMERIC))" if store.postgres else "(score - ?)"
    ((m2,),) = store.query(
        f"SELECT SUM({deviation} * {deviation}) FROM lg_eval_scores WHERE {where}",
        (float(mean), float(mean), run_id, key),
    )
    return MeanSample.from_moments(n, float(mean), float(m2 or 0.0), float(low), float(high))


def _first_keys(store: ResultStore, run_id: str, rows: int = 1000) -> dict[str, int]:
    """The feedback keys of the run's first ``rows`` cases in run order, numbered in
    the order they first appear (the report's order; keys first given later in a run
    follow, by feedback index): one row per key, ranked in SQL."""
    found = store.query(
        "SELECT key, MIN(n) FROM (SELECT s.key, ROW_NUMBER() OVER (ORDER BY c.ordinal,"
        " c.repetition, s.idx) AS n FROM (SELECT case_id, repetition, ordinal FROM"
        " lg_eval_cases WHERE run_id = ? ORDER BY ordinal, repetition LIMIT ?) AS c JOIN"
        " lg_eval_scores s ON s.run_id = ? AND s.case_id = c.case_id AND"
        " s.repetition = c.repetition) AS k GROUP BY key",
        (run_id, rows, run_id),
    )
    ranked = sorted(found, key=lambda row: int(row[1]))
    return {str(key): place for place, (key, _) in enumerate(ranked)}


def errored_row(store: ResultStore) -> str:
    """SQL true for a feedback row ``s`` whose evaluator raised: the very predicate of the
    store's partial index on errored rows, so the planner reads that index."""
    if store.postgres:
        return "(s.row::jsonb ->> 'error') IS NOT NULL"
    return "json_extract(s.row, '$.error') IS NOT NULL"
