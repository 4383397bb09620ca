"""JSON rendering: the whole report model, as one document a script or another tool can read.

The document is :class:`~lg_eval.reports.Report` dumped as it is, under the version
``lg_eval.report/3``: the run's record and aggregates, and every case × repetition listed
as the results store keeps it (``result``: the turns played with what each sent and what
the graph asked, the trajectory per turn and the reference, the tool calls as they ran
(an edited call keeps the model's proposal), the output and the answers per turn against
the expected output, every feedback with its comment and metadata, the simulated
conversation, latency, tokens, cost, error, notes) beside its trajectory difference
(``diff``); a comparison is the one ``compare_runs`` made. Text is verbatim: JSON escapes
C0 controls, and DEL, C1 controls (``U+009B`` acts as a terminal's CSI), bidi controls and
line separators are written as ``\\uXXXX`` escapes too, so the document is safe to print
on a terminal and a parser reads the same text back. ``Report.model_validate_json`` of the
output gives the model back, and the JSON Schema shipped in
``lg_eval/reports/schema/report-3.json`` (:func:`json_schema`, generated from the same
models) describes it.

:func:`write_json` streams a document whose cases come from an iterator (a big stored
run, read a page at a time) without holding them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from importlib.resources import files
from typing import IO, Any

from lg_eval._arguments import validated
from lg_eval._visible import data_escaped
from lg_eval.experiments import ExperimentRun
from lg_eval.reports._build import build_report
from lg_eval.reports._model import SCHEMA, Report, ReportCase

SCHEMA_FILE = "schema/report-3.json"
"""The shipped JSON Schema, relative to the ``lg_eval.reports`` package."""

SCHEMA_ID = "https://lg-eval.dev/schema/report-3.json"


def report_json(report: Report) -> dict[str, Any]:
    """``report`` as the JSON document's data (plain dicts, lists, strings and numbers)."""
    return report.model_dump(mode="json", by_alias=True)


@validated
def render_json(report: Report | ExperimentRun, *, indent: int | None = 2) -> str:
    """The report as JSON (``report`` may be a :class:`Report` or the run itself)."""
    if isinstance(report, ExperimentRun):
        report = build_report(report)
    text = json.dumps(report_json(report), indent=indent, ensure_ascii=False)
    return data_escaped(text)


def write_json(
    report: Report,
    out: IO[str],
    *,
    cases: Iterable[ReportCase] | None = None,
    extra: Mapping[str, Iterable[Any]] | None = None,
    indent: int | None = 2,
) -> None:
    """Write ``report``'s JSON document to ``out``, its ``cases`` taken from ``cases`` one
    at a time (default: the report's own) and each ``extra`` member written as an array
    item by item: memory holds one case, whatever the run's size.

    The layout is :func:`render_json`'s (members in another order when streamed).
    """
    document = report_json(report.model_copy(update={"cases": []}))
    del document["cases"]
    rows = report.cases if cases is None else cases
    streams: dict[str, Iterable[Any]] = {"cases": (case.model_dump(mode="json") for case in rows)}
    streams.update(extra or {})
    write_object(out, document, streams, indent)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the report document, generated from the pydantic models."""
    schema = Report.model_json_schema(by_alias=True, mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": f"lg_eval report ({SCHEMA})",
    }


def shipped_schema() -> dict[str, Any]:
    """The JSON Schema file shipped with lg_eval (equal to :func:`json_schema`)."""
    text = (files("lg_eval.reports") / SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def schema_text() -> str:
    """:func:`json_schema` as the shipped file holds it."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


# --------------------------------------------------------------------------- streaming


def write_object(
    out: IO[str], fixed: Mapping[str, Any], streams: Mapping[str, Iterable[Any]], indent: int | None
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
    text = data_escaped(json.dumps(value, indent=indent, ensure_ascii=False))
    if indent is None:
        return text
    return text.replace("\n", "\n" + " " * (indent * depth))
