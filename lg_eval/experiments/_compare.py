"""Aggregates of a run's results and the comparison of two runs, computed once here so every
report shows the same numbers.

* per case over its repetitions: :func:`case_passes` (repetitions, passed ones), from
  which :func:`pass_at_k` (some repetition passed) and :func:`pass_hat_k` (every
  repetition passed) follow; :func:`case_mean_scores`;
* per run: :func:`mean_scores` per feedback key, :func:`latency_percentiles`
  (p50 / p95), :func:`total_cost`;
* the inputs of a report's summary that need every result at once, :class:`CaseCounts`
  and :class:`Latencies`: :func:`case_counts` and :func:`latencies` compute them from
  results in memory, and the results store computes the same two in SQL
  (:meth:`~lg_eval.experiments.ResultStore.case_counts`,
  :meth:`~lg_eval.experiments.ResultStore.latencies`) for a run too large to load;
* :func:`compare_runs`: run B against run A, case by case (:func:`case_change`), with the
  paired tests of :func:`paired_tests`.

Scores count as numbers (a bool is 1.0 or 0.0); a missing score (``None``) is left
out of means. Percentiles interpolate linearly between the closest ranks. The public
functions validate their arguments where they are called (:func:`lg_eval._arguments.validated`);
the rest trust the results they are given.

Paired tests: is a change more than the agent's own noise?

Results pair on (case id, repetition), both runs' repetitions of a case facing each other.
For every case, and for all cases pooled, one test of the case status (passed or not, the
exact McNemar test) and one per feedback key present on both sides of at least one pair:
McNemar when every paired score of the key is a boolean, the Wilcoxon signed-rank test on
the numeric scores otherwise (see :mod:`lg_eval.stats`). A pair whose score is missing or
errored on either side is left out of that key's test. Per-case p-values are adjusted for
the false discovery rate over the cases of each key; the pooled ones are not.

With repetitions the pooled tests pair by case: a case's pairs are summed into one
difference per case (:func:`lg_eval.stats.clustered_mcnemar_test`,
:func:`~lg_eval.stats.clustered_difference_test`), since a case's repetitions are not
independent of each other; without repetitions they are the tests above, over the pairs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NamedTuple

from annotated_types import Ge, Le
from pydantic import Strict

from lg_eval._arguments import FiniteFloat, kind, validated
from lg_eval._feedback import ScoreValue, is_finite_number
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments._results import CaseChange, CaseResult, Comparison, ExperimentRun
from lg_eval.stats import (
    ALPHA,
    PairedTest,
    PairedTestKind,
    RateMoments,
    adjust_per_case,
    check_alpha,
    clustered_difference_test,
    clustered_mcnemar_test,
    mcnemar_tests,
    wilcoxon_tests,
)


def score_number(score: ScoreValue) -> float | None:
    """``score`` as a float (True 1.0, False 0.0); None stays None."""
    return None if score is None else float(score)


Percent = Annotated[float, Strict(), Ge(0), Le(100)]
"""A rank from 0 to 100 (a NaN fails both bounds)."""


@validated
def percentile(values: Sequence[FiniteFloat], q: Percent) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, linearly interpolated; None if empty.

    Raises:
        InvalidOptionError: ``values`` holds what is no finite number, or ``q`` is not in
            [0, 100].
    """
    return ranked(sorted(values), q)


def ranked(ordered: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``ordered`` (sorted, finite numbers), as :func:`percentile`."""
    if not ordered:
        return None
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    gap = ordered[high] - ordered[low]
    if not math.isfinite(gap):  # values far apart as floats go: weigh the two instead
        return ordered[low] * (1 - (rank - low)) + ordered[high] * (rank - low)
    return ordered[low] + gap * (rank - low)


def by_case(results: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    """Results grouped by case id (first-seen order), repetitions in order."""
    grouped: dict[str, list[CaseResult]] = {}
    for result in results:
        grouped.setdefault(result.case_id, []).append(result)
    for group in grouped.values():
        group.sort(key=lambda r: r.repetition)
    return grouped


def case_passes(results: Iterable[CaseResult]) -> dict[str, tuple[int, int]]:
    """Per case (first-seen order): ``(repetitions, passed repetitions)``.

    The one definition pass@k and pass^k rest on: a case passes at k when some of its
    repetitions passed, and at hat-k when all of them did.
    """
    counts: dict[str, tuple[int, int]] = {}
    for result in results:
        n, passed = counts.get(result.case_id, (0, 0))
        counts[result.case_id] = (n + 1, passed + (result.status == "passed"))
    return counts


@validated
def pass_at_k(run: ExperimentRun) -> dict[str, bool]:
    """Per case: whether at least one repetition passed."""
    return {case: passed > 0 for case, (_, passed) in case_passes(run.results).items()}


@validated
def pass_hat_k(run: ExperimentRun) -> dict[str, bool]:
    """Per case: whether every repetition passed (pass^k)."""
    return {case: passed == n for case, (n, passed) in case_passes(run.results).items()}


class CaseCounts(NamedTuple):
    """A run's results grouped by case: the inputs of pass@k and pass^k, and of the pass
    rate's interval over cases."""

    cases: int
    """Distinct case ids."""
    k: int
    """Repetitions of the case that has the most (0 without results)."""
    some: int
    """Cases with at least one passed repetition."""
    every: int
    """Cases whose every repetition passed."""
    passes: RateMoments = RateMoments()
    """Passed results of each case out of its results, summed over cases."""


def case_counts(results: Iterable[CaseResult]) -> CaseCounts:
    """:class:`CaseCounts` of ``results`` in memory (the store counts the same in SQL)."""
    passes = case_passes(results).values()
    moments = RateMoments()
    for n, passed in passes:
        moments = moments.plus(passed, n)
    return CaseCounts(
        cases=len(passes),
        k=max((n for n, _ in passes), default=0),
        some=sum(passed > 0 for _, passed in passes),
        every=sum(passed == n for n, passed in passes),
        passes=moments,
    )


class Latencies(NamedTuple):
    """Order statistics of a run's latencies in seconds (None without results)."""

    p50: float | None
    p95: float | None
    max: float | None


def latencies(results: Iterable[CaseResult]) -> Latencies:
    """:class:`Latencies` of ``results`` in memory (the store reads the same from SQL)."""
    values = sorted(result.latency_s for result in results)
    return Latencies(ranked(values, 50), ranked(values, 95), values[-1] if values else None)


def _means(results: Iterable[CaseResult]) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for row in result.scores:
            number = score_number(row.score)
            if number is not None:
                values[row.key].append(number)
    return {key: sum(v) / len(v) for key, v in values.items()}


@validated
def mean_scores(run: ExperimentRun) -> dict[str, float]:
    """Per feedback key: the mean score over every result that has one."""
    return _means(run.results)


def case_mean_scores(run: ExperimentRun) -> dict[str, dict[str, float]]:
    """Per case, per feedback key: the mean score over its repetitions."""
    return {case: _means(rs) for case, rs in by_case(run.results).items()}


@validated
def latency_percentiles(run: ExperimentRun) -> dict[str, float | None]:
    """``{"p50": ..., "p95": ...}`` of the results' latencies in seconds."""
    found = latencies(run.results)
    return {"p50": found.p50, "p95": found.p95}


def total_cost(run: ExperimentRun) -> float | None:
    """The summed cost of the results that report one (None when none does)."""
    costs = [r.cost for r in run.results if r.cost is not None]
    return sum(costs) if costs else None


# --------------------------------------------------------------------------- two runs


Tolerance = Annotated[FiniteFloat, Ge(0)]
"""A score difference of at least 0."""


StoredRun = Annotated[
    ExperimentRun,
    kind(lambda v: isinstance(v, ExperimentRun), "an ExperimentRun (ResultStore.load_run)"),
]
"""A run as the runner returns it or the store loads it, never rebuilt from a dict."""


@validated
def compare_runs(
    run_a: StoredRun, run_b: StoredRun, *, tolerance: Tolerance = 0.0, alpha: float = ALPHA
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
    level = check_alpha(alpha)
    a = {(r.case_id, r.repetition): r for r in run_a.results}
    b = {(r.case_id, r.repetition): r for r in run_b.results}
    keys = list(a) + [key for key in b if key not in a]
    cases = [_change(a.get(key), b.get(key), key, tolerance) for key in keys]
    means_a, means_b = _means(run_a.results), _means(run_b.results)
    p50_a, p50_b = latencies(run_a.results).p50, latencies(run_b.results).p50
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


# --------------------------------------------------------------------------- paired tests

Pair = tuple[CaseResult, CaseResult]


def paired_tests(
    run_a: ExperimentRun, run_b: ExperimentRun, *, alpha: float = ALPHA
) -> list[PairedTest]:
    """The pooled tests (status first, then keys in first-seen order), then each case's, in
    run A's case order. Cases in only one run take no part."""
    in_b = {(r.case_id, r.repetition): r for r in run_b.results}
    per_case: dict[str, list[Pair]] = {}
    for case_id, results in by_case(run_a.results).items():
        pairs = [
            (a, in_b[(case_id, a.repetition)]) for a in results if (case_id, a.repetition) in in_b
        ]
        if pairs:
            per_case[case_id] = pairs
    jobs = [_jobs(case_id, pairs) for case_id, pairs in per_case.items()]
    if not jobs:
        return []
    order = _keys(pair for pairs in per_case.values() for pair in pairs)
    tests = _pooled(jobs, order, alpha)
    return adjust_per_case(tests + _run([job for found in jobs for job in found], alpha))


@dataclass(frozen=True)
class _Job:
    """One test to make: which, of what, on which pairs."""

    test: PairedTestKind
    case_id: str | None
    key: str | None
    pairs: list[tuple[Any, Any]]


def _jobs(case_id: str, pairs: Sequence[Pair]) -> list[_Job]:
    """The tests of one case: its status, then each key scored on both sides of some
    pair, McNemar when every paired score is a bool, else Wilcoxon."""
    status = [(a.status == "passed", b.status == "passed") for a, b in pairs]
    jobs = [_Job("mcnemar", case_id, None, status)]
    for key in _keys(pairs):
        scored = [
            (sa, sb)
            for a, b in pairs
            if (sa := _score(a, key)) is not None and (sb := _score(b, key)) is not None
        ]
        if not scored:
            continue
        if all(isinstance(sa, bool) and isinstance(sb, bool) for sa, sb in scored):
            jobs.append(_Job("mcnemar", case_id, key, [(bool(a), bool(b)) for a, b in scored]))
        else:
            jobs.append(_Job("wilcoxon", case_id, key, [(float(a), float(b)) for a, b in scored]))
    return jobs


def _pooled(jobs: Sequence[Sequence[_Job]], order: Sequence[str], alpha: float) -> list[PairedTest]:
    """The pooled tests from the cases' jobs (status first, then keys in ``order``),
    pairing by case: McNemar when every case's test of the key is, else the scores' test
    with booleans as 1 and 0. With one pair per case, the same numbers as the tests over
    the pooled pairs."""
    grouped: dict[str | None, list[_Job]] = {}
    for found in jobs:
        for job in found:
            grouped.setdefault(job.key, []).append(job)
    tests = []
    for key in (None, *order):
        cases = grouped.get(key)
        if not cases:
            continue
        if all(job.test == "mcnemar" for job in cases):
            clusters = [job.pairs for job in cases]
            tests.append(clustered_mcnemar_test(clusters, key=key, alpha=alpha))
        else:
            clusters = [[(float(a), float(b)) for a, b in job.pairs] for job in cases]
            tests.append(clustered_difference_test(clusters, key=key, alpha=alpha))
    return tests


def _run(jobs: Sequence[_Job], alpha: float) -> list[PairedTest]:
    """The per-case tests of ``jobs``, in their order; those of one kind and key made in
    one batch (:func:`lg_eval.stats.mcnemar_tests`, :func:`~lg_eval.stats.wilcoxon_tests`)."""
    batches: dict[tuple[PairedTestKind, str | None], list[int]] = defaultdict(list)
    for index, job in enumerate(jobs):
        batches[(job.test, job.key)].append(index)
    found: dict[int, PairedTest] = {}
    for (test, key), indices in batches.items():
        samples = [jobs[i].pairs for i in indices]
        case_ids = [jobs[i].case_id for i in indices]
        made = (
            mcnemar_tests(samples, case_ids=case_ids, key=key, alpha=alpha)
            if test == "mcnemar"
            else wilcoxon_tests(samples, case_ids=case_ids, key=key, alpha=alpha)
        )
        found.update(zip(indices, made, strict=True))
    return [found[i] for i in range(len(jobs))]


def _keys(pairs: Iterable[Pair]) -> list[str]:
    keys: dict[str, None] = {}
    for a, _ in pairs:
        keys.update(dict.fromkeys(row.key for row in a.scores))
    return list(keys)


def _score(result: CaseResult, key: str) -> bool | float | None:
    for row in result.scores:
        if row.key == key and row.error is None and row.score is not None:
            score = row.score
            if isinstance(score, bool):
                return score
            return float(score) if is_finite_number(score) else None
    return None
