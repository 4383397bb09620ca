"""The viewer's comparison of two runs, classified in SQL: counted in one pass, paged.

Each case × repetition of run B is matched with run A's by ``(case_id, repetition)`` and
labelled by :func:`~lg_eval.experiments.case_change`'s rule, written once more as
SQL so that the store does the work over both runs' indexes:

* only in B: ``added``; only in A: ``removed``;
* ``regressed``: A passed and B did not, or a score dropped by more than the tolerance;
* ``improved``: otherwise, B passed and A did not, or a score rose by more than it;
* ``unchanged``: the rest.

A score is compared per feedback key where both are numbers: A's *last* row of the key
(``case_change`` reads A's scores into a dict) against each of B's rows of the key, of
which the last numeric one counts. Run A's cases are read in case-id order from the
index and each is labelled as it is read (its scores sought only when the statuses leave
the change open), so a page of one change stops reading once it has its rows; the counts
are one grouped pass over both runs (kept per pair of finished runs by
:mod:`lg_eval.viewer._summary`). The page's rows are then read whole and given to
``case_change`` itself, so what a row shows is exactly what ``lg-eval compare`` says.
Rows are ordered by ``(case_id, repetition)`` in code-point order (``COLLATE "C"`` on
Postgres), the order of Python's strings.
"""

from __future__ import annotations

from typing import Any

from lg_eval.experiments import CaseResult, ResultStore, ScoreRow, case_change
from lg_eval.reports._model import CHANGED

CHANGES = (*CHANGED, "unchanged")


def _moved(direction: str) -> str:
    """SQL true when case ``a`` × ``b`` has a feedback key whose score moved past the
    tolerance (``direction``: ``"<"`` with ``-tolerance``, ``">"`` with ``tolerance``):
    A's last row of the key against each of B's rows of the key that no later numeric
    row of B's replaces, all sought in the ``(run, case, repetition, key, idx)`` index."""
    later = (
        "NOT EXISTS (SELECT 1 FROM lg_eval_scores z WHERE z.run_id = {0}.run_id AND"
        " z.case_id = {0}.case_id AND z.repetition = {0}.repetition AND z.key = {0}.key"
        " AND z.idx > {0}.idx{1})"
    )
    return (
        "EXISTS (SELECT 1 FROM lg_eval_scores x JOIN lg_eval_scores y ON y.run_id = b.run_id"
        " AND y.case_id = x.case_id AND y.repetition = x.repetition AND y.key = x.key"
        " WHERE x.run_id = a.run_id AND x.case_id = a.case_id AND x.repetition = a.repetition"
        f" AND x.score IS NOT NULL AND y.score IS NOT NULL AND y.score - x.score {direction} ?"
        f" AND {later.format('x', '')} AND {later.format('y', ' AND z.score IS NOT NULL')})"
    )


def _in_a(store: ResultStore) -> str:
    """SQL selecting ``(case_id, repetition, change)`` of every case of run A, in case-id
    order read from the index (so a page stops once it has its rows); each case's change
    is worked out when the case is read, the score subqueries only when the statuses
    leave it open. Parameters: :func:`_params`."""
    order = ' COLLATE "C"' if store.postgres else ""
    label = (
        "CASE WHEN b.case_id IS NULL THEN 'removed'"
        " WHEN a.status = 'passed' AND b.status <> 'passed' THEN 'regressed'"
        f" WHEN {_moved('<')} THEN 'regressed'"
        " WHEN b.status = 'passed' AND a.status <> 'passed' THEN 'improved'"
        f" WHEN {_moved('>')} THEN 'improved' ELSE 'unchanged' END"
    )
    return (
        f"SELECT a.case_id{order} AS case_id, a.repetition, {label} AS change"
        " FROM lg_eval_cases a LEFT JOIN lg_eval_cases b ON b.run_id = ?"
        " AND b.case_id = a.case_id AND b.repetition = a.repetition WHERE a.run_id = ?"
    )


def _params(run_a: str, run_b: str, tolerance: float) -> tuple[Any, ...]:
    return (-tolerance, tolerance, run_b, run_a)


def _added(store: ResultStore) -> str:
    """SQL selecting ``(case_id, repetition)`` of the cases only run B has (parameters:
    run B, run A)."""
    order = ' COLLATE "C"' if store.postgres else ""
    return (
        f"SELECT b.case_id{order} AS case_id, b.repetition FROM lg_eval_cases b"
        " WHERE b.run_id = ? AND NOT EXISTS (SELECT 1 FROM lg_eval_cases a WHERE"
        " a.run_id = ? AND a.case_id = b.case_id AND a.repetition = b.repetition)"
    )


def change_counts(
    store: ResultStore, run_a: str, run_b: str, *, tolerance: float = 0.0
) -> dict[str, int]:
    """How many cases of B against A fall under each change (every change named, 0 if none)."""
    counts = dict.fromkeys(CHANGES, 0)
    for change, n in store.query(
        f"SELECT change, COUNT(*) FROM ({_in_a(store)}) AS l GROUP BY change",
        _params(run_a, run_b, tolerance),
    ):
        counts[str(change)] = int(n)
    ((added,),) = store.query(f"SELECT COUNT(*) FROM ({_added(store)}) AS l", (run_b, run_a))
    counts["added"] = int(added)
    return counts


def changes_page(
    store: ResultStore,
    run_a: str,
    run_b: str,
    change: str,
    *,
    offset: int,
    limit: int,
    tolerance: float = 0.0,
) -> list[Any]:
    """The ``limit`` cases of ``change`` from ``offset`` on, in ``(case_id, repetition)``
    order, each as :func:`~lg_eval.experiments.case_change` describes it."""
    query: str
    params: tuple[Any, ...]
    if change == "added":
        query, params = _added(store), (run_b, run_a)
    else:
        query = f"SELECT case_id, repetition FROM ({_in_a(store)}) AS l WHERE change = ?"
        params = (*_params(run_a, run_b, tolerance), change)
    keys = [
        (str(case_id), int(repetition))
        for case_id, repetition in store.query(
            f"{query} ORDER BY case_id, repetition LIMIT ? OFFSET ?", (*params, limit, offset)
        )
    ]
    a, b = _compared(store, run_a, keys), _compared(store, run_b, keys)
    return [case_change(a.get(key), b.get(key), tolerance=tolerance) for key in keys]


def _compared(
    store: ResultStore, run_id: str, keys: list[tuple[str, int]]
) -> dict[tuple[str, int], CaseResult]:
    """The results of ``keys`` in ``run_id`` with what a comparison reads: status,
    latency and each feedback's key and score."""
    if not keys:
        return {}
    ids = sorted({case_id for case_id, _ in keys})
    marks = ", ".join("?" for _ in ids)
    scores: dict[tuple[str, int], list[ScoreRow]] = {}
    for case_id, repetition, key, evaluator, score in store.query(
        "SELECT case_id, repetition, key, evaluator, score FROM lg_eval_scores"
        f" WHERE run_id = ? AND case_id IN ({marks}) ORDER BY case_id, repetition, idx",
        (run_id, *ids),
    ):
        scores.setdefault((str(case_id), int(repetition)), []).append(
            ScoreRow(key=str(key), evaluator=str(evaluator), score=score)
        )
    wanted = set(keys)
    out = {}
    for case_id, repetition, status, latency in store.query(
        "SELECT case_id, repetition, status, latency_s FROM lg_eval_cases"
        f" WHERE run_id = ? AND case_id IN ({marks})",
        (run_id, *ids),
    ):
        key = (str(case_id), int(repetition))
        if key in wanted:
            out[key] = CaseResult(
                run_id=run_id,
                case_id=key[0],
                repetition=key[1],
                status=status,
                latency_s=float(latency or 0.0),
                scores=scores.get(key, []),
            )
    return out
