"""The sweep's JSON report: the experiment JSON plus each thread with its checkpoint id."""

from __future__ import annotations

import json
from typing import Any

from lg_eval.reports import Report, build_report, render_json
from lg_eval.sweeps.sweep import SweepResult


def sweep_json(result: SweepResult, report: Report | None = None, *, indent: int = 2) -> str:
    """``render_json`` of the run, with ``threads``: ``thread_id``, ``checkpoint_id``,
    ``status`` and ``{key: score}`` of every thread the sweep scored."""
    document: dict[str, Any] = json.loads(render_json(report or build_report(result.run)))
    document["threads"] = [
        {
            "thread_id": r.case_id,
            "checkpoint_id": result.checkpoints.get(r.case_id),
            "status": r.status,
            "scores": {row.key: row.score for row in r.scores},
            "error": r.error,
        }
        for r in result.run.results
    ]
    return json.dumps(document, indent=indent, ensure_ascii=False)


__all__ = ["sweep_json"]
