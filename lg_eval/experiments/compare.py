"""Run B against run A, case by case: what regressed, what improved, by how much, and
whether the change is significant over the repetitions (:mod:`.significance`)."""

from __future__ import annotations

from typing import Literal

from lg_eval.arguments import checked_number
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments.aggregate import (
    latency_percentiles,
    mean_scores,
    score_number,
    total_cost,
)
from lg_eval.experiments.results import (
    CaseChange,
    CaseResult,
    Comparison,
    ExperimentRun,
    checked_run,
)
from lg_eval.experiments.significance import paired_tests
from lg_eval.stats import ALPHA, check_alpha


def compare_runs(
    run_a: ExperimentRun, run_b: ExperimentRun, *, tolerance: float = 0.0, alpha: float = ALPHA
) -> Comparison:
    """Compare ``run_b`` with the baseline ``run_a``, matching (case id, repetition).

    A case *regresses* when its status goes from ``passed`` to anything else or a
    score drops by more than ``tolerance``; it *improves* when it starts passing
    or a score rises by more than ``tolerance`` with none dropping; cases in only
    one run are ``added`` / ``removed``. Deltas are B minus A.

    ``tests`` holds the paired tests at level ``alpha``;
    :attr:`~lg_eval.experiments.Comparison.significant_regression` is the gate on them.

    Raises:
        InvalidOptionError: a run is no :class:`ExperimentRun`, ``tolerance`` is no finite
            number >= 0, or ``alpha`` is not in (0, 1).
    """
    checked_run(run_a, "run_a")
    checked_run(run_b, "run_b")
    checked_number(tolerance, "tolerance", at_least=0, what="a score difference")
    level = check_alpha(alpha)
    a = {(r.case_id, r.repetition): r for r in run_a.results}
    b = {(r.case_id, r.repetition): r for r in run_b.results}
    keys = list(a) + [key for key in b if key not in a]
    cases = [_change(a.get(key), b.get(key), key, tolerance) for key in keys]
    means_a, means_b = mean_scores(run_a), mean_scores(run_b)
    p50_a, p50_b = latency_percentiles(run_a)["p50"], latency_percentiles(run_b)["p50"]
    cost_a, cost_b = total_cost(run_a), total_cost(run_b)
    return Comparison(
        run_a=run_a.info.run_id,
        run_b=run_b.info.run_id,
        tolerance=tolerance,
        cases=cases,
        evaluator_deltas={k: means_b[k] - means_a[k] for k in means_b if k in means_a},
        pass_rate_a=run_a.pass_rate,
        pass_rate_b=run_b.pass_rate,
        latency_p50_delta_s=None if p50_a is None or p50_b is None else p50_b - p50_a,
        cost_delta=None if cost_a is None and cost_b is None else (cost_b or 0.0) - (cost_a or 0.0),
        alpha=level,
        tests=paired_tests(run_a, run_b, alpha=level),
    )


def case_change(
    a: CaseResult | None, b: CaseResult | None, *, tolerance: float = 0.0
) -> CaseChange:
    """How one case (× repetition) changed from ``a`` to ``b`` (None: absent from that run),
    by :func:`compare_runs`'s rule."""
    either = a if a is not None else b
    if either is None:
        raise InvalidOptionError("case_change: a and b are both None; give the case of one run.")
    return _change(a, b, (either.case_id, either.repetition), tolerance)


def _change(
    a: CaseResult | None, b: CaseResult | None, key: tuple[str, int], tolerance: float
) -> CaseChange:
    case_id, repetition = key
    if a is None or b is None:
        return CaseChange(
            case_id=case_id,
            repetition=repetition,
            change="added" if a is None else "removed",
            status_a=a.status if a else None,
            status_b=b.status if b else None,
        )
    deltas = {}
    scores_a = {row.key: score_number(row.score) for row in a.scores}
    for row in b.scores:
        before, after = scores_a.get(row.key), score_number(row.score)
        if before is not None and after is not None:
            deltas[row.key] = after - before
    dropped = any(d < -tolerance for d in deltas.values())
    rose = any(d > tolerance for d in deltas.values())
    change: Literal["regressed", "improved", "unchanged"]
    if (a.status == "passed" and b.status != "passed") or dropped:
        change = "regressed"
    elif (b.status == "passed" and a.status != "passed") or rose:
        change = "improved"
    else:
        change = "unchanged"
    return CaseChange(
        case_id=case_id,
        repetition=repetition,
        change=change,
        status_a=a.status,
        status_b=b.status,
        score_deltas=deltas,
        latency_delta_s=b.latency_s - a.latency_s,
    )


__all__ = ["case_change", "compare_runs"]
