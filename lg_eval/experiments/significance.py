"""Paired tests of run B against run A: is a change more than the agent's own noise?

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

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lg_eval.experiments.aggregate import by_case
from lg_eval.experiments.results import CaseResult, ExperimentRun
from lg_eval.feedback import is_finite_number
from lg_eval.stats import (
    ALPHA,
    PairedTest,
    PairedTestKind,
    adjust_per_case,
    clustered_difference_test,
    clustered_mcnemar_test,
    mcnemar_tests,
    wilcoxon_tests,
)

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


__all__ = ["paired_tests"]
