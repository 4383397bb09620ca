"""A stored run's report counted in SQL: ``stream_report``, and the queries the viewer shares.

The SQL path of the report's aggregates (the in-memory one is
:func:`~lg_eval.reports.build_report`; a differential test holds the two equal on SQLite
and Postgres): the store counts the statuses, the cases' repetitions (pass@k, pass^k and
the pass rate's interval over cases), the latency order statistics, the sums, the tags,
the notes, each feedback key (:mod:`lg_eval.reports._keys`) and the bins of the
distributions, so a report of a 100,000-result run reads only its aggregates and the
results it lists. Values held in a case's JSON (tags, notes, attempts) are read with the
engine's JSON functions, which hold no NUL character (Postgres refuses it, SQLite cuts the
text there): one is read as ``␀``, what every rendering shows for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any

from annotated_types import Ge
from pydantic import Strict

from lg_eval._arguments import validated
from lg_eval.errors import StoreError
from lg_eval.experiments import CaseResult, ResultStore, grouped_scores, with_scores
from lg_eval.reports._build import ResultTally
from lg_eval.reports._keys import evaluator_table
from lg_eval.reports._model import (
    STATUSES,
    Bins,
    Histogram,
    Report,
    ReportCase,
    RunNote,
    StatusCounts,
    Summary,
    TagSummary,
    TrendPoint,
    rate,
)
from lg_eval.stats import clustered_rate_interval, wilson_interval

Whole = Annotated[int, Strict(), Ge(0)]
SEVERITY = ("error", "timeout", "failed", "passed")
"""Worst first: a result that raised, then one that timed out, then a failed one."""
NOTE_CASES, NOTES = 3, 20
"""As in memory: a note names 3 case ids; a summary keeps 20 notes."""
COLUMNS = {"latency_s": "latency (s)", "tokens": "tokens", "cost": "$"}
"""The numeric columns of a run's cases the viewer charts, with their axis labels."""


@validated
def stream_report(
    store: ResultStore,
    run_id: str,
    *,
    worst: Whole | None = 20,
    history: Whole = 10,
    tally: ResultTally | None = None,
) -> Report:
    """The report of stored run ``run_id``, every aggregate counted in SQL: the ``worst``
    results as ``cases`` (errors, then timeouts, then failures, each by the lowest mean
    score; ``cases_total`` says how many there are), or every result in dataset order
    (``worst=None``); the trend over the ``history`` latest runs of the same dataset.

    ``tally``: every result of the run counted as it was stored (a sweep's); its notes,
    tags and retries are taken from it rather than read from each result's JSON.

    Raises:
        StoreError: no run ``run_id`` is stored.
        InvalidOptionError: ``store`` is no :class:`~lg_eval.experiments.ResultStore`,
            ``run_id`` no text, ``worst`` or ``history`` no whole number >= 0.
    """
    info = store.run_info(run_id)
    if info is None:
        raise StoreError(f"No run {run_id!r} in {store.url}.")
    summary = stored_summary(store, run_id, tally)
    listed = store.iter_results(run_id) if worst is None else worst_results(store, run_id, worst)
    return Report(
        info=info,
        summary=summary,
        evaluators=evaluator_table(store, run_id),
        tags=stored_tags(store, run_id) if tally is None else tally.tags(),
        cases=[ReportCase.of(result) for result in listed],
        score_histogram=score_histogram(store, run_id),
        latency_histogram=column_histograms(store, run_id)["latency_s"],
        trend=stored_trend(store, info.dataset, run_id, history) if history else [],
        cases_total=None if worst is None else summary.results,
    )


def status_counts(store: ResultStore, run_id: str) -> StatusCounts:
    """Results per status of ``run_id`` (from the status index)."""
    counts = store.status_counts(run_id)
    return StatusCounts(**{status: n for status, n in counts.items() if status in STATUSES})


def stored_summary(store: ResultStore, run_id: str, tally: ResultTally | None = None) -> Summary:
    """The run's :class:`~lg_eval.reports.Summary`, counted in SQL (the notes and retries
    taken from ``tally`` when given: see :func:`stream_report`)."""
    counts = status_counts(store, run_id)
    cases, latency = store.case_counts(run_id), store.latencies(run_id)
    attempts = f"CAST({json_text(store, 'c.result', 'attempts')} AS INTEGER)"
    retried = (
        f"SUM(CASE WHEN {attempts} > 1 THEN {attempts} - 1 ELSE 0 END)" if tally is None else "0"
    )
    ((n, seconds, tokens, cost, costs, calls, retries),) = store.query(
        "SELECT COUNT(*), SUM(latency_s), SUM(tokens), SUM(cost), COUNT(cost), SUM(model_calls),"
        f" {retried} FROM lg_eval_cases c WHERE c.run_id = ?",
        (run_id,),
    )
    return Summary(
        results=int(n),
        cases=cases.cases,
        k=cases.k,
        counts=counts,
        pass_rate=rate(counts.passed, int(n)),
        pass_at_k=rate(cases.some, cases.cases),
        pass_hat_k=rate(cases.every, cases.cases),
        pass_rate_interval=clustered_rate_interval(cases.passes),
        pass_at_k_interval=wilson_interval(cases.some, cases.cases),
        pass_hat_k_interval=wilson_interval(cases.every, cases.cases),
        latency_p50_s=latency.p50,
        latency_p95_s=latency.p95,
        latency_mean_s=float(seconds) / int(n) if n else None,
        latency_max_s=latency.max,
        tokens=int(tokens or 0),
        cost=float(cost) if costs else None,
        model_calls=int(calls or 0),
        retries=int(retries or 0) if tally is None else tally.retries,
        notes=stored_notes(store, run_id) if tally is None else tally.notes(),
    )


def stored_notes(store: ResultStore, run_id: str) -> list[RunNote]:
    """The cases' notes, each once, in the order they first appear in the run (the first
    :data:`NOTES`), with how many results carry each and the first case ids that do."""
    each = _elements(store, "notes", ordered=True)
    rows = store.query(
        "WITH n AS (SELECT e.value AS note, c.case_id, c.repetition, ROW_NUMBER() OVER"
        f" (ORDER BY c.ordinal, c.repetition, e.key) AS pos FROM lg_eval_cases c, {each}"
        " WHERE c.run_id = ?), r AS (SELECT note, case_id, MIN(pos) AS pos,"
        " COUNT(DISTINCT repetition) AS reps FROM n GROUP BY note, case_id),"
        " t AS (SELECT note, SUM(reps) AS reps, MIN(pos) AS pos FROM r GROUP BY note"
        " ORDER BY MIN(pos) LIMIT ?) SELECT t.note, t.reps, k.case_id FROM t JOIN (SELECT"
        " note, case_id, ROW_NUMBER() OVER (PARTITION BY note ORDER BY pos) AS k FROM r) AS k"
        " ON k.note = t.note AND k.k <= ? ORDER BY t.pos, k.k",
        (run_id, NOTES, NOTE_CASES),
    )
    notes: dict[str, RunNote] = {}
    for text, reps, case_id in rows:
        note = notes.setdefault(str(text), RunNote(text=str(text), cases=int(reps), case_ids=[]))
        note.case_ids.append(str(case_id))
    return list(notes.values())


def stored_tags(store: ResultStore, run_id: str) -> list[TagSummary]:
    """Per tag (sorted), the statuses of the results carrying it, counted in SQL."""
    counted: dict[str, dict[str, int]] = {}
    for tag, status, n in store.query(
        "SELECT tag, status, COUNT(*) FROM (SELECT DISTINCT c.case_id, c.repetition, c.status,"
        f" e.value AS tag FROM lg_eval_cases c, {_elements(store, 'tags')} WHERE c.run_id = ?)"
        " AS d GROUP BY tag, status",
        (run_id,),
    ):
        counted.setdefault(str(tag), {})[str(status)] = int(n)
    return [
        TagSummary(tag=tag, counts=(c := StatusCounts(**n)), pass_rate=c.pass_rate)
        for tag, n in sorted(counted.items())
    ]


def score_histogram(store: ResultStore, run_id: str) -> Histogram:
    """The bins of the run's numeric scores (not booleans), counted in SQL."""
    typed = (
        f"jsonb_typeof({_json(store, 's.row')} -> 'score') = 'number'"
        if store.postgres
        else "json_type(s.row, '$.score') IN ('integer', 'real')"
    )
    where = f"s.run_id = ? AND s.score IS NOT NULL AND {typed}"
    ((low, high),) = store.query(
        f"SELECT MIN(s.score), MAX(s.score) FROM lg_eval_scores s WHERE {where}", (run_id,)
    )
    low, high = (None if v is None else float(v) for v in (low, high))
    unit = low is None or (low >= 0.0 and high is not None and high <= 1.0)
    bins = Bins.spanning(low, high, unit=unit)
    index, params = bin_sql(store, bins, "s.score")
    rows = store.query(
        f"SELECT {index}, COUNT(*) FROM lg_eval_scores s WHERE {where} GROUP BY 1",
        (*params, run_id),
    )
    return bins.histogram("numeric scores", ((int(at), int(n)) for at, n in rows))


def column_histograms(store: ResultStore, run_id: str) -> dict[str, Histogram]:
    """The bins (from 0) of each column of the run's cases in :data:`COLUMNS`, counted in
    SQL: one query for the columns' maxima, one that groups the cases by their three bins
    at once (at most ``BINS ** 3`` groups)."""
    columns = list(COLUMNS)
    (highs,) = store.query(
        f"SELECT {', '.join(f'MAX({c})' for c in columns)} FROM lg_eval_cases WHERE run_id = ?",
        (run_id,),
    )
    spans = [Bins.spanning(None, None if h is None else float(h), zero=True) for h in highs]
    indexes = [bin_sql(store, bins, column) for bins, column in zip(spans, columns, strict=True)]
    rows = store.query(
        f"SELECT {', '.join(sql for sql, _ in indexes)}, COUNT(*) FROM lg_eval_cases"
        " WHERE run_id = ? GROUP BY 1, 2, 3",
        (*(p for _, params in indexes for p in params), run_id),
    )
    return {
        column: bins.histogram(
            COLUMNS[column], ((int(row[i]), int(row[-1])) for row in rows if row[i] is not None)
        )  # a NULL column (no such number for a case) is in no bin
        for i, (column, bins) in enumerate(zip(columns, spans, strict=True))
    }


def bin_sql(store: ResultStore, bins: Bins, column: str) -> tuple[str, list[float]]:
    """SQL for the bin of ``column`` (:meth:`Bins.place`), and its parameters: cut to a
    whole bin (SQLite's CAST truncates, Postgres' rounds, so FLOOR there). A value in the
    first bin is not divided: Postgres refuses a quotient that underflows (a latency of
    1e-320 s over a bin of 0.1 s)."""
    factor, offset, width = bins.scale
    x = column if factor == 1.0 else f"({column} * 0.5)"
    quotient = f"FLOOR(({x} - ?) / ?)" if store.postgres else f"CAST(({x} - ?) / ? AS INTEGER)"
    return f"CASE WHEN {x} - ? < ? THEN 0 ELSE {quotient} END", [offset, width] * 2


def stored_trend(store: ResultStore, dataset: str, run_id: str, n: int) -> list[TrendPoint]:
    """The ``n`` latest runs of ``dataset`` and ``run_id``, oldest first, each counted in SQL."""
    rows = store.query(
        "SELECT run_id FROM lg_eval_runs WHERE dataset = ? ORDER BY started_at DESC, run_id"
        " DESC LIMIT ?",
        (dataset, n),
    )
    points = []
    for rid in dict.fromkeys([str(r) for (r,) in reversed(rows)] + [run_id]):
        info = store.run_info(rid)
        if info is not None:
            counts = status_counts(store, rid)
            points.append(
                TrendPoint(
                    run_id=rid,
                    started_at=info.started_at,
                    pass_rate=counts.pass_rate,
                    results=counts.total,
                    current=rid == run_id,
                    dataset_hash=info.dataset_hash,
                )
            )
    return sorted(points, key=lambda p: p.started_at)


def worst_results(store: ResultStore, run_id: str, n: int) -> list[CaseResult]:
    """The ``n`` worst results of the run, worst first: by status (:data:`SEVERITY`), then
    by the mean of their scores (booleans count 1 and 0; none: last), then in run order."""
    severity = " ".join(f"WHEN '{status}' THEN {i}" for i, status in enumerate(SEVERITY))
    rows = store.query(
        "SELECT c.case_id, c.repetition, c.result FROM lg_eval_cases c LEFT JOIN (SELECT"
        " case_id, repetition, AVG(score) AS m FROM lg_eval_scores WHERE run_id = ?"
        " GROUP BY case_id, repetition) AS s ON s.case_id = c.case_id AND"
        f" s.repetition = c.repetition WHERE c.run_id = ? ORDER BY CASE c.status {severity}"
        " ELSE 0 END, s.m IS NULL, s.m, c.ordinal, c.repetition LIMIT ?",
        (run_id, run_id, n),
    )
    return list(read_results(store, run_id, rows))


def read_results(
    store: ResultStore, run_id: str, rows: Sequence[Sequence[Any]]
) -> Iterator[CaseResult]:
    """Case rows ``(case_id, repetition, result JSON)`` as results, with their feedback."""
    if not rows:
        return
    ids = sorted({str(row[0]) for row in rows})
    found = store.query(
        "SELECT case_id, repetition, row FROM lg_eval_scores WHERE run_id = ?"
        f" AND case_id IN ({', '.join('?' for _ in ids)}) ORDER BY case_id, repetition, idx",
        (run_id, *ids),
    )
    yield from with_scores(rows, grouped_scores(found, store.url, run_id), store.url, run_id)


def json_text(store: ResultStore, column: str, key: str) -> str:
    """SQL for the text of member ``key`` of the JSON object in ``column`` (NULL for null)."""
    if store.postgres:
        return f"({_json(store, column)} ->> '{key}')"
    return f"json_extract({_json(store, column)}, '$.{key}')"


def _json(store: ResultStore, column: str) -> str:
    """``column``'s JSON with ``\\u0000`` read as ``\\u2400`` (``␀``): the escape keeps its
    shape, so the JSON stays valid whatever precedes it."""
    nul = f"replace({column}, '\\u0000', '\\u2400')"
    return f"{nul}::jsonb" if store.postgres else nul


def _elements(store: ResultStore, key: str, *, ordered: bool = False) -> str:
    """A FROM item ``e`` of the text elements (``e.value``, ``e.key`` their position when
    ``ordered``) of the list under ``key`` of each case's JSON ``c.result``."""
    if store.postgres:
        array = f"jsonb_array_elements_text({_json(store, 'c.result')} -> '{key}')"
        return f"{array} WITH ORDINALITY AS e(value, key)" if ordered else f"{array} AS e(value)"
    return f"json_each({_json(store, 'c.result')}, '$.{key}') AS e"
