"""The sweep's reports: JSON streamed to a file, HTML of the bounded report.

The JSON report is the experiment JSON (``render_json``'s document, aggregates from
the bounded :attr:`SweepResult.report`) with three lists: ``results`` (every thread as
an experiment result), ``threads`` (every thread with its ``thread_id``,
``checkpoint_id``, ``status``, ``scores``, ``error``) and ``worst`` (the report's worst
threads, same fields). ``results`` and ``threads`` are read from the results store a
page at a time and written as they are read, so a 100,000-thread sweep's JSON never
exists in memory. The HTML report shows the summary, the distributions and the worst
threads, not a row per thread.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from lg_eval._files import atomic_writer, write_atomic
from lg_eval.experiments import CaseResult
from lg_eval.reports import Report, render_html
from lg_eval.reports.json_report import report_document, result_entry
from lg_eval.sweeps.result import SweepResult, WorstThread


def thread_entry(result: CaseResult, checkpoint_id: str | None) -> dict[str, Any]:
    """One thread of the ``threads`` list."""
    return {
        "thread_id": result.case_id,
        "checkpoint_id": checkpoint_id,
        "status": result.status,
        "scores": {row.key: row.score for row in result.scores},
        "error": result.error,
    }


def write_sweep_json(
    result: SweepResult,
    out: str | Path | IO[str],
    report: Report | None = None,
    *,
    indent: int | None = 2,
    batch: int = 500,
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
    document = report_document(report or result.report)
    run_id = result.info.run_id
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:

        def results() -> Iterator[dict[str, Any]]:
            # one read of the run: each result goes out now, its thread line to the spool
            for case, checkpoint_id in result.threads(batch=batch):
                spool.write(json.dumps(thread_entry(case, checkpoint_id), ensure_ascii=False))
                spool.write("\n")
                yield result_entry(run_id, case)

        def threads() -> Iterator[dict[str, Any]]:
            spool.seek(0)
            for line in spool:
                yield json.loads(line)

        streams: dict[str, Iterable[Any]] = {
            "results": results(),
            "threads": threads(),
            "worst": [_worst(w) for w in result.worst],
        }
        fixed = {k: v for k, v in document.items() if k not in streams}
        _write_object(out, fixed, streams, indent)


def sweep_json(result: SweepResult, report: Report | None = None, *, indent: int | None = 2) -> str:
    """The sweep's JSON report as a string (:func:`write_sweep_json` into memory: for
    small sweeps; write a big one to a file)."""
    buffer = io.StringIO()
    write_sweep_json(result, buffer, report, indent=indent)
    return buffer.getvalue()


def write_sweep_html(result: SweepResult, out: str | Path, report: Report | None = None) -> None:
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


def _write_object(
    out: IO[str], fixed: dict[str, Any], streams: dict[str, Iterable[Any]], indent: int | None
) -> None:
    """A JSON object: ``fixed`` members dumped whole, then each stream as an array written
    item by item (the layout ``json.dumps(..., indent=indent)`` would give)."""
    pad = "" if indent is None else " " * indent
    newline = "" if indent is None else "\n"
    members: list[tuple[str, Iterator[str]]] = [
        (key, iter([_dump(value, indent, 1)])) for key, value in fixed.items()
    ]
    members += [(key, _array(items, indent)) for key, items in streams.items()]
    out.write("{" + newline)
    for position, (key, chunks) in enumerate(members):
        out.write(f"{pad}{json.dumps(key)}: ")
        for chunk in chunks:
            out.write(chunk)
        out.write(("," if position < len(members) - 1 else "") + newline)
    out.write("}")


def _array(items: Iterable[Any], indent: int | None) -> Iterator[str]:
    pad = "" if indent is None else " " * (2 * indent)
    newline = "" if indent is None else "\n"
    yield "["
    first = True
    for item in items:
        yield ("" if first else ",") + newline + pad + _dump(item, indent, 2)
        first = False
    yield ("" if first else newline + ("" if indent is None else " " * indent)) + "]"


def _dump(value: Any, indent: int | None, depth: int) -> str:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    if indent is None:
        return text
    return text.replace("\n", "\n" + " " * (indent * depth))


__all__ = ["sweep_json", "thread_entry", "write_sweep_html", "write_sweep_json"]
