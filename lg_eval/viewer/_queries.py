"""What the viewer's pages read from the results store: paged SQL, nothing loaded whole.

Every function here runs a few ``SELECT`` statements against the store's tables
(``lg_eval_runs``, ``lg_eval_cases``, ``lg_eval_scores``; see
:class:`lg_eval.experiments.ResultStore`) and returns at most one page of rows, so a page of a
100,000-case run costs what a page of a 10-case run costs plus the aggregates SQL
computes over the run's index. JSON held in a text column (a case's tags, a feedback's
error) is read with the engine's own JSON functions (SQLite's ``json_each`` /
``json_extract``, Postgres' ``jsonb`` operators).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from lg_eval.experiments import (
    CaseResult,
    ResultStore,
    RunInfo,
    grouped_scores,
    stored,
    with_scores,
)
from lg_eval.reports import EvaluatorSummary, Histogram, StatusCounts
from lg_eval.reports.stream import SEVERITY
from lg_eval.reports.tally import Binner, histogram_bounds, rate
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
from lg_eval.viewer._compare import change_counts, changes_page

PAGE = 50
"""Rows per page of cases, runs and changes."""


@dataclass(frozen=True)
class RunRow:
    """A run in the runs list: its record, counts and its dataset's recent pass rates."""

    info: RunInfo
    counts: StatusCounts
    pass_rate: float | None
    trend: tuple[float | None, ...] = ()
    previous: str | None = None
    hashes: tuple[str, ...] = ()
    """The dataset's hash in each run of :attr:`trend`."""

    @property
    def dataset_changed(self) -> bool:
        """Whether the previous run of the dataset ran other cases (another hash)."""
        return len(self.hashes) > 1 and self.hashes[-1] != self.hashes[-2]

    @property
    def delta(self) -> float | None:
        """This run's pass rate minus the previous run's of the same dataset (None when
        either is unknown, or the dataset changed in between: other cases, no delta)."""
        if len(self.trend) < 2 or self.trend[-1] is None or self.trend[-2] is None:
            return None
        return None if self.dataset_changed else self.trend[-1] - self.trend[-2]

    @property
    def spark(self) -> tuple[list[str], list[float], list[tuple[float, float]]]:
        """The sparkline of :attr:`trend` (110 x 22): one polyline per stretch of runs of
        the same dataset hash, the x of each change between them, and a dot per run (a
        stretch of one run has no line)."""
        n = len(self.trend)
        xs = [4 + i * 102 / max(n - 1, 1) for i in range(n)]
        ys = [19 - 16 * (value or 0.0) for value in self.trend]
        cuts = [0, *(i for i in range(1, n) if self.hashes[i] != self.hashes[i - 1]), n]
        lines = [
            " ".join(f"{xs[i]:.1f},{ys[i]:.1f}" for i in range(a, b))
            for a, b in itertools.pairwise(cuts)
        ]
        dots = [(round(x, 1), round(y, 1)) for x, y in zip(xs, ys, strict=True)]
        return lines, [round((xs[i - 1] + xs[i]) / 2, 1) for i in cuts[1:-1]], dots


@dataclass(frozen=True)
class CaseFilter:
    """The run page's filters: status, tag, a failing feedback key, and a search: text in
    the case id, in the values of what the case sent and was asked (:data:`_SEARCHED`), or
    the whole thread id."""

    status: str | None = None
    tag: str | None = None
    failing: str | None = None
    search: str | None = None

    @property
    def active(self) -> bool:
        """Whether any filter is set."""
        return any((self.status, self.tag, self.failing, self.search))


@dataclass
class CasePage:
    """One page of a run's cases (worst first) and how many match the filter."""

    results: list[CaseResult]
    total: int
    page: int
    pages: int


@dataclass
class ComparePage:
    """Run B against run A: counts per change and one page of the chosen change."""

    counts: dict[str, int]
    changes: list[Any] = field(default_factory=list)
    page: int = 0
    pages: int = 1


def runs_page(store: ResultStore, page: int, *, trend: int = 10) -> tuple[list[RunRow], int]:
    """The runs, newest first, ``PAGE`` at a time; ``(rows, pages)``."""
    total = int(store.query("SELECT COUNT(*) FROM lg_eval_runs", ())[0][0])
    rows = store.query(
        "SELECT run_id, info FROM lg_eval_runs ORDER BY started_at DESC, run_id DESC"
        " LIMIT ? OFFSET ?",
        (PAGE, page * PAGE),
    )
    infos = [stored(RunInfo, info, store.url, str(run_id), "record") for run_id, info in rows]
    history: dict[str, list[str]] = {}
    hashes: dict[str, str] = {}
    for dataset in {info.dataset for info in infos}:
        found = store.query(
            "SELECT run_id, dataset_hash FROM lg_eval_runs WHERE dataset = ?"
            " ORDER BY started_at, run_id",
            (dataset,),
        )
        history[dataset] = [str(run_id) for (run_id, _) in found]
        hashes.update((str(run_id), str(digest)) for (run_id, digest) in found)
    wanted = {run_id for ids in history.values() for run_id in ids[-(trend + PAGE) :]}
    rates = {run_id: pass_rate(status_counts(store, run_id)) for run_id in wanted}
    out = []
    for info in infos:
        ids = history[info.dataset]
        position = ids.index(info.run_id)
        earlier = ids[max(0, position - trend + 1) : position + 1]
        counts = status_counts(store, info.run_id)
        out.append(
            RunRow(
                info=info,
                counts=counts,
                pass_rate=pass_rate(counts),
                trend=tuple(rates.get(run_id) for run_id in earlier),
                previous=ids[position - 1] if position else None,
                hashes=tuple(hashes[run_id] for run_id in earlier),
            )
        )
    return out, max(1, -(-total // PAGE))


def status_counts(store: ResultStore, run_id: str) -> StatusCounts:
    """Results per status of ``run_id`` (from the status index)."""
    counts = store.status_counts(run_id)
    return StatusCounts(**{k: v for k, v in counts.items() if k in StatusCounts.model_fields})


def pass_rate(counts: StatusCounts) -> float | None:
    """Passed over all results."""
    return rate(counts.passed, counts.total)


def evaluator_table(store: ResultStore, run_id: str) -> list[EvaluatorSummary]:
    """One row per feedback key of the run, counted in SQL (as the report's table), in
    the order the run first gives each key.

    Only the errored rows' JSON is read (from their partial index); the rest is counted
    from the key index. A key's intervals are the report's. Without repetitions, the
    Wilson interval of its verdicts and, for the mean, the bootstrap of its scores when it
    has at most :data:`~lg_eval.stats.BOOTSTRAP_LIMIT` of them (read whole), else the normal
    interval from the mean and the sum of squared deviations SQL computes. With
    repetitions, its rows grouped by case in SQL give each case's passed rows and rows with
    a verdict (the pass rate's interval over cases) and its scores' count, and the mean's
    interval is taken over cases (each case's total and count, or their moments past that
    many cases); memory never holds more than that many rows.
    """
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


HISTOGRAMS = {"latency_s": "latency (s)", "tokens": "tokens", "cost": "$"}
"""The columns of a run's cases the run page charts, with their axis labels."""


def column_histograms(store: ResultStore, run_id: str) -> dict[str, Histogram]:
    """Equal-width bins (from 0) of each numeric column of the run's cases in
    :data:`HISTOGRAMS`, counted in SQL: one query for the columns' maxima, one that
    groups the cases by their three bins at once (at most ``BINS ** 3`` groups)."""
    columns = list(HISTOGRAMS)
    (highs,) = store.query(
        f"SELECT {', '.join(f'MAX({c})' for c in columns)} FROM lg_eval_cases WHERE run_id = ?",
        (run_id,),
    )
    binners = [Binner(*_bounds(None if high is None else float(high))) for high in highs]
    # the bin of each value: truncated (SQLite's CAST) or floored (Postgres' CAST rounds);
    # a value in the first bin is not divided, since Postgres refuses a quotient that
    # underflows (a latency of 1e-320 s over a bin of 0.1 s)
    quotient = "FLOOR(({0} - ?) / ?)" if store.postgres else "CAST(({0} - ?) / ? AS INTEGER)"
    index = f"CASE WHEN {{0}} - ? < ? THEN 0 ELSE {quotient} END"
    params = [x for bins in binners for x in (bins.lo, bins.width) * 2]
    rows = store.query(
        f"SELECT {', '.join(index.format(c) for c in columns)}, COUNT(*) FROM lg_eval_cases"
        " WHERE run_id = ? GROUP BY 1, 2, 3",
        (*params, run_id),
    )
    for *found, count in rows:
        for bins, at in zip(binners, found, strict=True):
            if at is not None:  # the column is NULL (no such number for this case)
                bins.counts[min(max(int(at), 0), len(bins.counts) - 1)] += int(count)
    return {c: bins.histogram(HISTOGRAMS[c]) for c, bins in zip(columns, binners, strict=True)}


def _bounds(highest: float | None) -> tuple[float, float]:
    """The bins' range of a column whose largest value is ``highest``: from 0."""
    return histogram_bounds(
        None if highest is None else 0.0, highest, in_unit=False, from_zero=True
    )


def case_page(store: ResultStore, run_id: str, where: CaseFilter, page: int) -> CasePage:
    """One page of ``run_id``'s cases matching ``where``: errors, then timeouts, then
    failures, then passed, each in dataset order."""
    clauses, params = _filter_sql(store, run_id, where)
    condition = " AND ".join(["c.run_id = ?", "c.status = ?", *clauses])
    statuses = [s for s in SEVERITY if where.status in (None, s)]
    matching = {
        str(status): int(n)
        for status, n in store.query(
            "SELECT c.status, COUNT(*) FROM lg_eval_cases c WHERE"
            f" {' AND '.join(['c.run_id = ?', *clauses])} GROUP BY c.status",
            (run_id, *params),
        )
    }  # one count for every status: a filter reading each case's JSON reads it once
    skip, need, total = page * PAGE, PAGE, 0
    rows: list[tuple[Any, ...]] = []
    for status in statuses:  # worst first, each status read from its index in run order
        n = matching.get(status, 0)
        total += n
        if need > 0 and skip < n:
            found = store.query(
                f"SELECT c.case_id, c.repetition, c.result FROM lg_eval_cases c WHERE"
                f" {condition} ORDER BY c.ordinal, c.repetition LIMIT ? OFFSET ?",
                (run_id, status, *params, need, skip),
            )
            rows += found
            need -= len(found)
            skip = 0
        else:
            skip = max(0, skip - n)
    pages = max(1, -(-total // PAGE))
    return CasePage(list(_results(store, run_id, rows)), total, page, pages)


def one_case(store: ResultStore, run_id: str, case_id: str, repetition: int) -> CaseResult | None:
    """One stored result with its feedback, or None."""
    rows = store.query(
        "SELECT case_id, repetition, result FROM lg_eval_cases WHERE run_id = ? AND case_id = ?"
        " AND repetition = ?",
        (run_id, case_id, repetition),
    )
    return next(_results(store, run_id, rows), None)


def compare_page(
    store: ResultStore,
    run_a: str,
    run_b: str,
    change: str,
    page: int,
    *,
    tolerance: float = 0.0,
    counts: dict[str, int] | None = None,
) -> ComparePage:
    """Run B against run A, case by case in case-id order: every change counted in one
    SQL pass over the two runs (or ``counts``, if already known), and the ``page``-th page
    of ``change`` read (see :mod:`lg_eval.viewer._compare`), so memory is a page whatever
    the runs' size."""
    if counts is None:
        counts = change_counts(store, run_a, run_b, tolerance=tolerance)
    kept = changes_page(
        store, run_a, run_b, change, offset=page * PAGE, limit=PAGE, tolerance=tolerance
    )
    return ComparePage(counts, kept, page, max(1, -(-counts.get(change, 0) // PAGE)))


def _results(
    store: ResultStore, run_id: str, rows: Sequence[Sequence[Any]]
) -> Iterator[CaseResult]:
    """Case rows ``(case_id, repetition, result JSON)`` with their feedback rows."""
    if not rows:
        return
    ids = sorted({str(row[0]) for row in rows})
    marks = ", ".join("?" for _ in ids)
    found = store.query(
        "SELECT case_id, repetition, row FROM lg_eval_scores WHERE run_id = ?"
        f" AND case_id IN ({marks}) ORDER BY case_id, repetition, idx",
        (run_id, *ids),
    )
    yield from with_scores(rows, grouped_scores(found, store.url, run_id), store.url, run_id)


def _filter_sql(store: ResultStore, run_id: str, where: CaseFilter) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if where.tag:
        if _PLAIN.fullmatch(where.tag):  # stored verbatim in quotes: skip the JSON of the rest
            clauses.append(f"{'strpos' if store.postgres else 'instr'}(c.result, ?) > 0")
            params.append(f'"{where.tag}"')
        if store.postgres:
            clauses.append("(c.result::jsonb -> 'tags') @> to_jsonb(?::text)")
        else:
            clauses.append(
                "EXISTS (SELECT 1 FROM json_each(c.result, '$.tags') t WHERE t.value = ?)"
            )
        params.append(where.tag)
    if where.failing:  # the key failed or raised: both read from their partial indexes
        clauses.append(
            "(c.case_id, c.repetition) IN (SELECT s.case_id, s.repetition FROM lg_eval_scores s"
            " WHERE s.run_id = ? AND s.key = ? AND s.passed = 0 UNION SELECT s.case_id,"
            " s.repetition FROM lg_eval_scores s WHERE s.run_id = ? AND s.key = ? AND"
            f" {errored_row(store)})"
        )
        params += [run_id, where.failing, run_id, where.failing]
    if where.search:
        like = "ILIKE" if store.postgres else "LIKE"
        clauses.append(
            f"(c.case_id {like} ? ESCAPE '!' OR {_json_text(store, 'c.result', 'thread_id')} = ?"
            f" OR EXISTS ({_SEARCHED[store.postgres]}))"
        )
        pattern = "%" + _like(where.search) + "%"
        params += [pattern, where.search, pattern]
    return clauses, params


_SEARCHED = {
    False: (  # SQLite quotes some keys of a fullkey ($."tool_calls"): roots are told apart
        "SELECT 1 FROM (SELECT 't' AS root, value, type, fullkey FROM json_tree(c.result,"
        " '$.turns') UNION ALL SELECT 'c', value, type, fullkey FROM json_tree(c.result,"
        " '$.tool_calls') UNION ALL SELECT 'g', value, type, fullkey FROM json_tree(c.result,"
        " '$.tags') UNION ALL SELECT 'e', value, type, fullkey FROM json_tree(c.result,"
        " '$.error')) AS t WHERE t.type = 'text' AND t.value LIKE ? ESCAPE '!' AND"
        " (t.root IN ('g', 'e') OR (t.root = 't' AND (t.fullkey GLOB '*[[][0-9]*[]].sent*'"
        " OR t.fullkey GLOB '*[[][0-9]*[]].error'"
        " OR t.fullkey GLOB '*[[][0-9]*[]].asked[[][0-9]*[]].value*'))"
        " OR (t.root = 'c' AND t.fullkey GLOB '*[[][0-9]*[]].args*'))"
    ),
    True: (
        "SELECT 1 FROM jsonb_path_query(jsonb_build_array(c.result::jsonb -> 'tags',"
        " c.result::jsonb -> 'error',"
        " jsonb_path_query_array(c.result::jsonb, 'lax $.turns[*].sent'),"
        " jsonb_path_query_array(c.result::jsonb, 'lax $.turns[*].asked[*].value'),"
        " jsonb_path_query_array(c.result::jsonb, 'lax $.turns[*].error'),"
        " jsonb_path_query_array(c.result::jsonb, 'lax $.tool_calls[*].args')),"
        " 'strict $.**') AS t(v) WHERE jsonb_typeof(t.v) = 'string'"
        " AND (t.v #>> '{}') ILIKE ? ESCAPE '!'"
    ),
}
"""What a search reads of a case, per engine (Postgres?): the text values (never the keys or
the JSON's quotes and commas) of its tags, its error, what each turn sent, the questions
each turn asked and its error, and the arguments of its tool calls. The values lg_eval itself
writes in every case (run id, status, times, a turn's kind, node names of the trajectory,
tool names, interrupt ids) are not read, so a search for ``_`` or ``"`` or a field's name
matches only the cases whose content holds it. The case id is searched too (a substring),
and the thread id (whole)."""


_PLAIN = re.compile(r"[ !#-\[\]-~]+")
"""Text JSON writes as it is (printable ASCII but ``"`` and ``\\``): a tag of it appears
in a case's stored JSON as ``"tag"``, which a substring search finds without parsing."""


def _like(text: str) -> str:
    """``text`` with LIKE's wildcards taken literally (``!`` is the escape character)."""
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def errored_row(store: ResultStore) -> str:
    """SQL true for a feedback row ``s`` whose evaluator raised: the very predicate of the
    store's partial index on errored rows, so the planner reads that index."""
    return f"{_json_text(store, 's.row', 'error')} IS NOT NULL"


def _json_text(store: ResultStore, column: str, key: str) -> str:
    """SQL for the text of member ``key`` of the JSON object in ``column`` (NULL for null)."""
    if store.postgres:
        return f"({column}::jsonb ->> '{key}')"
    return f"json_extract({column}, '$.{key}')"


__all__ = [
    "HISTOGRAMS",
    "PAGE",
    "CaseFilter",
    "CasePage",
    "ComparePage",
    "RunRow",
    "case_page",
    "column_histograms",
    "compare_page",
    "evaluator_table",
    "one_case",
    "runs_page",
    "status_counts",
]
