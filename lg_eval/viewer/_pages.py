"""The viewer's pages: a request's path and query → an HTML page built from paged queries.

:class:`Pages` knows nothing of HTTP: :meth:`Pages.respond` takes the path and the parsed
query string and returns a :class:`Page` (status, content type, body), which the server
(:mod:`lg_eval.viewer._server`) writes with the security headers. Every page is rendered
by jinja2 with autoescaping on and the report's filters (run content goes through
:func:`~lg_eval.reports._text.visible` first); no page carries a script, and the
stylesheet is served from the package.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any
from urllib.parse import urlencode

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined

from lg_eval.errors import LgEvalError
from lg_eval.experiments import ResultStore
from lg_eval.reports import ReportCase
from lg_eval.reports import _charts as charts
from lg_eval.reports._html import environment as report_environment
from lg_eval.reports._model import STATUSES
from lg_eval.reports._stored import status_counts
from lg_eval.reports._text import diff_turns
from lg_eval.viewer import _labels as labels
from lg_eval.viewer import _queries as q
from lg_eval.viewer._compare import CHANGES
from lg_eval.viewer._summary import AggregateCache


@dataclass(frozen=True)
class Page:
    """What the server sends back."""

    status: int
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    location: str | None = None
    """Where a written form sends the browser next (a 303's ``Location``)."""


@cache
def environment() -> Environment:
    """The viewer's templates first, then the report's (its chart and diff macros), with
    the report's filters; autoescaping on everywhere, undefined names fail."""
    env = Environment(
        loader=ChoiceLoader(
            [PackageLoader("lg_eval.viewer", "templates"), PackageLoader("lg_eval.reports")]
        ),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(report_environment().filters)
    env.tests.update(report_environment().tests)
    env.filters["pretty"] = pretty
    env.filters["structured"] = structured
    env.globals["link"] = link
    return env


def pretty(value: Any) -> str:
    """A value as indented JSON text (escaped by the template like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def structured(value: Any) -> str:
    """What a human sent or a graph asked, for reading: a string as it is (its own line
    breaks kept), anything else as indented JSON (a payload's nesting shown, not one line
    of JSON with ``\\n`` in it)."""
    return value if isinstance(value, str) else pretty(value)


def link(path: str, **params: Any) -> str:
    """``path?query`` with the parameters that are set (the query escaped by urlencode)."""
    shown = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(shown) if shown else "")


def stylesheet() -> bytes:
    """The viewer's CSS: the report's, then the viewer's own rules."""
    reports = files("lg_eval.reports") / "templates" / "report.css"
    viewer = files("lg_eval.viewer") / "templates" / "viewer.css"
    return (reports.read_text(encoding="utf-8") + viewer.read_text(encoding="utf-8")).encode()


IDLE = 8
"""Connections to the store a viewer keeps open between requests."""


class Pages:
    """The pages over one results store.

    With ``opener`` (what opens another connection to the same store), each request reads
    through a connection of its own, taken from a small pool: a store's connection serves
    one query at a time, so a slow page (a search reading every case of a big run) would
    otherwise hold up every other page until it ends. Without it, every request shares
    ``store``.

    ``token``: the session's token the label form carries (None: no form, the viewer is
    read-only; the server sets it); ``labeler``: who the labels written through it are from.
    """

    def __init__(
        self,
        store: ResultStore,
        *,
        opener: Callable[[], ResultStore] | None = None,
        token: str | None = None,
        labeler: str = "viewer",
    ) -> None:
        self._main = store
        self.token, self.labeler = token, labeler
        self._opener = opener
        self._idle: list[ResultStore] = []
        self._pool = threading.Lock()
        self._local = threading.local()
        self.aggregates = AggregateCache(store)
        """The finished runs' aggregates, counted once (see :mod:`lg_eval.viewer._summary`)."""
        self._routes: dict[str, Callable[[Mapping[str, str]], Page]] = {
            "/": self.runs,
            "/run": self.run,
            "/case": self.case,
            "/compare": self.compare,
            "/compare/case": self.compare_case,
            "/calibration": self.calibration,
        }

    @property
    def store(self) -> ResultStore:
        """The store as this request reads it (its own connection when there is a pool)."""
        borrowed: ResultStore | None = getattr(self._local, "store", None)
        return borrowed or self._main

    @contextmanager
    def _connection(self) -> Iterator[None]:
        """A connection of the pool for the request under way, returned when it is done."""
        if self._opener is None:
            yield
            return
        with self._pool:
            store = self._idle.pop() if self._idle else None
        if store is None:
            try:
                store = self._opener()
            except LgEvalError:  # cannot be opened twice (an in-memory database): share it
                yield
                return
        self._local.store = store
        try:
            yield
        finally:
            self._local.store = None
            with self._pool:
                keep = len(self._idle) < IDLE
                if keep:
                    self._idle.append(store)
            if not keep:
                store.close()

    def close(self) -> None:
        """Close the pool's connections (not ``store``, which the caller owns)."""
        with self._pool:
            idle, self._idle = self._idle, []
        for store in idle:
            store.close()

    def respond(self, path: str, query: Mapping[str, str]) -> Page:
        """The page at ``path`` (404 for an unknown path or a run or case not stored)."""
        with self._connection():
            return self._respond(path, query)

    def label(self, form: Mapping[str, str]) -> Page:
        """Write the label the case page's form sent (its token already checked by the
        server); a 303 back to the case, or the reason nothing was written."""
        with self._connection():
            saved = labels.save_form(self.store, form, self.labeler)
        if saved.label is None:
            return Page(saved.status, f"{saved.problem}\n".encode(), "text/plain; charset=utf-8")
        back = link("/case", run=saved.label.run_id, id=saved.label.case_id)
        rep = saved.label.repetition
        return Page(
            303, b"Labelled.\n", "text/plain; charset=utf-8", location=f"{back}&rep={rep}#labels"
        )

    def _respond(self, path: str, query: Mapping[str, str]) -> Page:
        if path == "/static/viewer.css":
            return Page(200, stylesheet(), "text/css; charset=utf-8")
        route = self._routes.get(path)
        if route is None:
            return self._missing(f"No page {path}.")
        return route(query)

    # --- pages ----------------------------------------------------------------------------

    def runs(self, query: Mapping[str, str]) -> Page:
        page = _page(query)
        rows, pages = q.runs_page(self.store, page)
        return self._render("runs.html.j2", rows=rows, page=page, pages=pages, title="Runs")

    def run(self, query: Mapping[str, str]) -> Page:
        run_id = query.get("id", "")
        info = self.store.run_info(run_id)
        if info is None:
            return self._missing(f"No run {run_id!r} in the store.")
        where = q.CaseFilter(
            status=query.get("status") if query.get("status") in STATUSES else None,
            tag=query.get("tag") or None,
            failing=query.get("failing") or None,
            search=query.get("q") or None,
        )
        summary = self.aggregates.summary(info, store=self.store)
        cases = q.case_page(self.store, run_id, where, _page(query))
        bins = summary.histograms
        chart_list = [
            charts.pass_rate_bars(summary.evaluators),
            charts.histogram_chart("Latency", bins["latency_s"], "s"),
            charts.histogram_chart("Tokens", bins["tokens"]),
            charts.histogram_chart("Cost", bins["cost"]),
        ]
        previous = self.store.query(
            "SELECT run_id FROM lg_eval_runs WHERE dataset = ? AND started_at < ?"
            " ORDER BY started_at DESC LIMIT 1",
            (info.dataset, info.started_at.isoformat()),
        )
        return self._render(
            "run.html.j2",
            title=f"Run {info.run_id}",
            info=info,
            counts=summary.counts,
            pass_rate=summary.counts.pass_rate,
            evaluators=summary.evaluators,
            agreements=labels.agreements(self.store, [e.key for e in summary.evaluators]),
            charts=chart_list,
            cases=cases,
            where=where,
            statuses=STATUSES,
            previous=str(previous[0][0]) if previous else None,
            runs=[i.run_id for i in self.store.runs() if i.run_id != run_id][-50:],
        )

    def case(self, query: Mapping[str, str]) -> Page:
        run_id, case_id, repetition = query.get("run", ""), query.get("id", ""), _rep(query)
        result = q.one_case(self.store, run_id, case_id, repetition)
        if result is None:
            return self._missing(f"No case {case_id!r} (repetition {repetition}) in {run_id!r}.")
        keys = sorted({row.key for row in result.scores})
        return self._render(
            "case.html.j2",
            title=f"Case {case_id}",
            run_id=run_id,
            case=ReportCase.of(result),
            labels=labels.case_labels(self.store, result),
            agreements=labels.agreements(self.store, keys),
            keys=keys,
            token=self.token,
        )

    def calibration(self, query: Mapping[str, str]) -> Page:
        key = query.get("key", "")
        found = labels.agreements(self.store, [key]).get(key)
        if found is None:
            return self._missing(f"No labels of {key!r} in the store.")

        def case_link(item: Any) -> str:
            return link("/case", run=item.run_id, id=item.case_id, rep=item.repetition or None)

        return self._render(
            "judge.html.j2", title=f"Calibration of {key}", c=found, case_link=case_link
        )

    def compare(self, query: Mapping[str, str]) -> Page:
        run_a, run_b = query.get("a", ""), query.get("b", "")
        info_a, info_b = self.store.run_info(run_a), self.store.run_info(run_b)
        if info_a is None or info_b is None:
            return self._missing(f"No run {run_a if info_a is None else run_b!r} in the store.")
        asked = query.get("change", "")
        change = asked if asked in CHANGES else "regressed"
        counts = self.aggregates.changes(info_a, info_b, store=self.store)
        found = q.compare_page(self.store, run_a, run_b, change, _page(query), counts=counts)
        return self._render(
            "compare.html.j2",
            title=f"{run_b} against {run_a}",
            run_a=run_a,
            run_b=run_b,
            change=change,
            changes=CHANGES,
            found=found,
            rate_a=status_counts(self.store, run_a).pass_rate,
            rate_b=status_counts(self.store, run_b).pass_rate,
        )

    def compare_case(self, query: Mapping[str, str]) -> Page:
        run_a, run_b = query.get("a", ""), query.get("b", "")
        case_id, repetition = query.get("id", ""), _rep(query)
        a = q.one_case(self.store, run_a, case_id, repetition)
        b = q.one_case(self.store, run_b, case_id, repetition)
        if a is None and b is None:
            return self._missing(f"No case {case_id!r} in {run_a!r} or {run_b!r}.")
        case_a = None if a is None else ReportCase.of(a)
        case_b = None if b is None else ReportCase.of(b)
        diff = (
            diff_turns(case_a.trajectory or [], case_b.trajectory or [])
            if case_a is not None and case_b is not None
            else []
        )
        return self._render(
            "compare_case.html.j2",
            title=f"Case {case_id}: {run_b} against {run_a}",
            run_a=run_a,
            run_b=run_b,
            case_id=case_id,
            repetition=repetition,
            a=case_a,
            b=case_b,
            diff=diff,
        )

    # --- plumbing -------------------------------------------------------------------------

    def _render(self, template: str, **context: Any) -> Page:
        text = environment().get_template(template).render(store=self.store.url, **context)
        return Page(200, text.encode("utf-8"))

    def _missing(self, message: str) -> Page:
        page = self._render("missing.html.j2", title="Not found", message=message)
        return Page(404, page.body)


def _page(query: Mapping[str, str]) -> int:
    text = query.get("page", "0")
    return int(text) if text.isdigit() and len(text) < 9 else 0


def _rep(query: Mapping[str, str]) -> int:
    text = query.get("rep", "0")
    return int(text) if text.isdigit() and len(text) < 9 else 0
