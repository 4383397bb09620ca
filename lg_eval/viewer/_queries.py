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
from dataclasses import dataclass, field
from typing import Any

from lg_eval.experiments import CaseResult, ResultStore, RunInfo, stored
from lg_eval.reports._keys import errored_row
from lg_eval.reports._model import StatusCounts
from lg_eval.reports._stored import SEVERITY, json_text, read_results, status_counts
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
    rates = {run_id: status_counts(store, run_id).pass_rate for run_id in wanted}
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
                pass_rate=counts.pass_rate,
                trend=tuple(rates.get(run_id) for run_id in earlier),
                previous=ids[position - 1] if position else None,
                hashes=tuple(hashes[run_id] for run_id in earlier),
            )
        )
    return out, max(1, -(-total // PAGE))


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
    return CasePage(list(read_results(store, run_id, rows)), total, page, pages)


def one_case(store: ResultStore, run_id: str, case_id: str, repetition: int) -> CaseResult | None:
    """One stored result with its feedback, or None."""
    rows = store.query(
        "SELECT case_id, repetition, result FROM lg_eval_cases WHERE run_id = ? AND case_id = ?"
        " AND repetition = ?",
        (run_id, case_id, repetition),
    )
    return next(read_results(store, run_id, rows), None)


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
            f"(c.case_id {like} ? ESCAPE '!' OR {json_text(store, 'c.result', 'thread_id')} = ?"
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
