"""The sweep's reports: JSON streamed to a file, HTML of the bounded report.

The JSON report is the experiment JSON (``lg_eval.report/3``: the report model,
aggregates from the bounded :attr:`SweepResult.report`) with ``cases`` holding every
thread as a case of the report, and two more lists: ``threads`` (every thread with its
``thread_id``, ``checkpoint_id``, ``status``, ``scores``, ``error``) and ``worst`` (the
report's worst threads, same fields). ``cases`` and ``threads`` are read from the
results store a page at a time and written as they are read
(:func:`~lg_eval.reports.write_json`), so a 100,000-thread sweep's JSON
never exists in memory. The HTML report shows the summary, the distributions and the worst
threads, not a row per thread.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import SkipValidation

from lg_eval._arguments import Count, Size, instance_of, validated
from lg_eval._files import atomic_writer, write_atomic
from lg_eval.experiments import CaseResult
from lg_eval.reports import Report, ReportCase, render_html, write_json
from lg_eval.sweeps._result import SweepResult, WorstThread

Swept = Annotated[SweepResult, instance_of(SweepResult, what="a SweepResult (sweep_threads)")]
"""A sweep's result, the contract of every writer's ``result``."""
Shown = Annotated[Report | None, instance_of(Report, type(None), what="a Report or None")]
"""The report whose aggregates head the document (None: the result's own)."""


def thread_entry(result: CaseResult, checkpoint_id: str | None) -> dict[str, Any]:
    """One thread of the ``threads`` list."""
    return {
        "thread_id": result.case_id,
        "checkpoint_id": checkpoint_id,
        "status": result.status,
        "scores": {row.key: row.score for row in result.scores},
        "error": result.error,
    }


@validated
def write_sweep_json(
    result: Swept,
    out: SkipValidation[str | Path | IO[str]],
    report: Shown = None,
    *,
    indent: Size | None = 2,
    batch: Count = 500,
) -> None:
    """Write the sweep's JSON report to ``out`` (a path, or a text file open for writing),
    streaming ``results`` and ``threads`` from the store ``batch`` threads at a time (one
    read of the run; the ``threads`` lines wait in a temporary file, not in memory).

    ``report``: the report whose aggregates head the document (default
    ``result.report``); its ``results`` are replaced by every thread of the run.
    """
    if isinstance(out, str | Path):
        with atomic_writer(out) as handle:
            write_sweep_json(result, handle, report, indent=indent, batch=batch)
        return
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:

        def cases() -> Iterator[ReportCase]:
            # one read of the run: each case goes out now, its thread line to the spool
            for case, checkpoint_id in result.threads(batch=batch):
                spool.write(json.dumps(thread_entry(case, checkpoint_id), ensure_ascii=False))
                spool.write("\n")
                yield ReportCase.of(case)

        def threads() -> Iterator[dict[str, Any]]:
            spool.seek(0)
            for line in spool:
                yield json.loads(line)

        extra: dict[str, Iterable[Any]] = {
            "threads": threads(),
            "worst": [_worst(w) for w in result.worst],
        }
        every = (report or result.report).model_copy(update={"cases_total": None})
        write_json(every, out, cases=cases(), extra=extra, indent=indent)


@validated
def sweep_json(result: Swept, report: Shown = None, *, indent: Size | None = 2) -> str:
    """The sweep's JSON report as a string (:func:`write_sweep_json` into memory: for
    small sweeps; write a big one to a file)."""
    buffer = io.StringIO()
    write_sweep_json(result, buffer, report, indent=indent)
    return buffer.getvalue()


@validated
def write_sweep_html(result: Swept, out: SkipValidation[str | Path], report: Shown = None) -> None:
    """Write the sweep's HTML report (summary, distributions, worst threads) to ``out``, whole
    or not at all (:class:`~lg_eval.errors.OutputWriteError` when it cannot be written)."""
    write_atomic(out, render_html(report or result.report))


def _worst(thread: WorstThread) -> dict[str, Any]:
    return {
        "thread_id": thread.thread_id,
        "checkpoint_id": thread.checkpoint_id,
        "status": thread.status,
        "scores": thread.scores,
        "error": thread.error,
    }
