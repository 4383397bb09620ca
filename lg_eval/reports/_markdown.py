"""Markdown rendering: a run summary to paste in a pull request or a CI job summary.

Content never becomes Markdown or HTML: :func:`md` shows control characters visibly,
turns ``&``, ``<``, ``>`` into entities (raw HTML and autolinks are neutralised), escapes
the characters that make emphasis, code spans, links and table cells (``\\ ` * _ [ ] | ~``)
and replaces newlines with ``<br>``, so a value can never start a line (no heading,
list or quote from content) nor split a table row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from lg_eval._arguments import validated
from lg_eval._visible import visible
from lg_eval.experiments import Comparison
from lg_eval.reports._model import (
    STATUSES,
    Report,
    ReportCase,
    Summary,
    agreement_text,
    changed,
    kind_label,
    pooled_tests,
    reason,
    shown_disagreements,
    significant_cases,
    verdict_word,
)
from lg_eval.reports._text import (
    Step,
    dataset_changes,
    money,
    note_line,
    number,
    p_value,
    percent,
    seconds,
    signed,
    span,
    test_effect,
    test_subject,
    test_verdict,
    value_text,
)

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md(text: object) -> str:
    """``text`` as inert inline Markdown (safe in a table cell)."""
    shown = visible(str(text))
    shown = "".join(_ENTITIES.get(char, char) for char in shown)
    shown = _SPECIAL.sub(r"\\\1", shown)
    return shown.replace("\n", "<br>")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A GFM table; cells are already escaped with :func:`md` by the caller."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _calibration(report: Report) -> list[str]:
    """Each labelled key's agreement with people, and its disagreements side by side."""
    if not report.calibration:
        return []
    out = ["## Calibration", ""]
    out += table(
        ["key", "agreement with people", "agreement", "TPR", "TNR", "precision", "α"],
        [
            [
                md(found.key),
                md(agreement_text(report, found.key)),
                percent(found.agreement.agreement.value),
                percent(found.agreement.tpr.value),
                percent(found.agreement.tnr.value),
                percent(found.agreement.precision.value),
                number(found.agreement.alpha.value),
            ]
            for found in report.calibration
        ],
    )
    for found in report.calibration:
        if not found.disagreements:
            continue
        shown = shown_disagreements(found)
        out += [f"Where {md(found.key)} and people disagree ({len(shown)} of "
                f"{len(found.disagreements)}):", ""]  # fmt: skip
        out += table(
            ["case", "run", "judge", "judge's reasoning", "person", "person's note"],
            [
                [
                    md(item.case_id),
                    md(item.run_id),
                    verdict_word(item.judge),
                    md(item.judge_comment or "–"),
                    md(f"{verdict_word(item.human)} ({', '.join(item.labelers)})"),
                    md(item.note or "–"),
                ]
                for item in shown
            ],
        )
    return out


@validated
def render_markdown(report: Report) -> str:
    """The report as GitHub-flavoured Markdown."""
    info, summary = report.info, report.summary
    out = [f"# lg_eval report: {md(info.dataset)}", ""]
    out += table(
        ["run", "dataset", "status", "pass rate", *STATUSES],
        [
            [
                md(info.run_id),
                md(info.dataset),
                md(info.status),
                percent(summary.pass_rate),
                *(str(summary.counts.of(s)) for s in STATUSES),
            ]
        ],
    )
    out += [
        f"Pass rate 95% CI {span(summary.pass_rate_interval)} (Wilson{_over(summary)}); "
        f"pass@{summary.k} {span(summary.pass_at_k_interval)}, "
        f"pass^{summary.k} {span(summary.pass_hat_k_interval)} over cases.",
        "",
    ]
    out += table(
        [
            "results",
            f"pass@{summary.k}",
            f"pass^{summary.k}",
            "latency p50",
            "latency p95",
            "tokens",
            "cost",
        ],
        [
            [
                str(summary.results),
                percent(summary.pass_at_k),
                percent(summary.pass_hat_k),
                seconds(summary.latency_p50_s),
                seconds(summary.latency_p95_s),
                str(summary.tokens),
                money(summary.cost),
            ]
        ],
    )
    for note in summary.notes:
        out += [f"> note: {md(note_line(note))}", ""]
    if report.evaluators:
        out += ["## Evaluators", ""]
        out += table(
            [
                "key",
                "pass rate",
                "95% CI",
                "passed",
                "failed",
                "no verdict",
                "errors",
                "mean",
                "95% CI",
                "min",
                "max",
            ],
            [
                [
                    md(e.key),
                    percent(e.pass_rate),
                    span(e.pass_rate_interval),
                    str(e.passed),
                    str(e.failed),
                    str(e.no_verdict),
                    str(e.errors),
                    number(e.mean),
                    span(e.mean_interval, number),
                    number(e.min),
                    number(e.max),
                ]
                for e in report.evaluators
            ],
        )
        out += _calibration(report)
    if report.tags:
        out += ["## Tags", ""]
        out += table(
            ["tag", "results", "passed", "pass rate"],
            [
                [md(t.tag), str(t.counts.total), str(t.counts.passed), percent(t.pass_rate)]
                for t in report.tags
            ],
        )
    out += ["## Cases", ""]
    out += table(
        ["case", "status", "tags", "scores", "latency"],
        [
            [
                md(case.label),
                case.result.status,
                md(", ".join(case.result.tags)),
                md(", ".join(f"{k}={number(v)}" for k, v in case.score_map.items())),
                seconds(case.result.latency_s),
            ]
            for case in report.cases
        ],
    )
    if report.failures:
        out += ["## Failed cases", ""]
        for case in report.failures:
            out += _failed(case)
    if report.trend:
        out += ["## Trend", ""]
        out += table(
            ["run", "started", "pass rate", "results", "dataset"],
            [
                [
                    md(p.run_id) + (" (this run)" if p.current else ""),
                    p.started_at.isoformat(timespec="seconds"),
                    percent(p.pass_rate),
                    str(p.results),
                    "changed since the run above" if new else "",
                ]
                for p, new in zip(report.trend, dataset_changes(report.trend), strict=True)
            ],
        )
    if report.comparison:
        out += _comparison(report)
    return "\n".join(out).rstrip("\n") + "\n"


def _failed(case: ReportCase) -> list[str]:
    result = case.result
    out = [f"### {md(case.label)}: {result.status}", ""]
    if result.error:
        out += [f"**Error:** {md(result.error)}", ""]
    if case.failing_checks or case.no_verdicts:
        out += table(
            ["feedback", "score", "comment"],
            [
                *(
                    [md(f.key), number(f.score), md(f.error or f.comment or "")]
                    for f in case.failing_checks
                ),
                *([md(f.key), "no verdict", md(reason(f))] for f in case.no_verdicts),
            ],
        )
    if case.shows_answer:
        out += table(
            [md(case.expected_label), "said (the final answer)"],
            [[_or_dash(case.expected_text), _or_dash(result.output)]],
        )
        if case.turn_answers:
            out += table(["turn", "said"], [[str(n), md(said)] for n, said in case.turn_answers])
    if case.diff:
        out += table(
            ["turn", "expected", "actual", "difference"],
            [
                [
                    str(d.turn + 1),
                    _steps(d.expected),
                    _steps(d.actual),
                    md(d.reason) if d.reason else "same",
                ]
                for d in case.diff
            ],
        )
    if result.turns:
        out += table(
            ["turn", "kind", "sent", "asked"],
            [
                [
                    f"turns[{t.index}]",
                    md(kind_label(t)),
                    md("" if t.sent is None else value_text(t.sent)),
                    md("; ".join(value_text(a.get("value")) for a in t.asked))
                    + (f" {md(t.error)}" if t.error else ""),
                ]
                for t in result.turns
            ],
        )
    if case.judge_notes:
        out += table(
            ["judge", "score", "reasoning"],
            [[md(j.key), number(j.score), md(j.comment or "")] for j in case.judge_notes],
        )
    return out


def _or_dash(content: str | None) -> str:
    """``content`` as inert Markdown, ``–`` when there is none."""
    return "–" if content is None else md(content)


def _steps(steps: list[Step]) -> str:
    """Steps joined by arrows; the differing ones in bold."""
    return " → ".join(f"**{md(s.name)}**" if s.differs else md(s.name) for s in steps) or "–"


def _comparison(report: Report) -> list[str]:
    comparison = report.comparison
    assert comparison is not None
    out = [f"## Comparison: {md(comparison.run_b)} against {md(comparison.run_a)}", ""]
    out += [f"Pass rate {percent(comparison.pass_rate_a)} → {percent(comparison.pass_rate_b)}."]
    out += [""]
    moved = changed(comparison)
    if moved:
        out += table(
            ["case", "change", "status", "score deltas"],
            [
                [
                    md(c.case_id if c.repetition == 0 else f"{c.case_id}#{c.repetition}"),
                    c.change,
                    f"{c.status_a or '–'} → {c.status_b or '–'}",
                    md(", ".join(f"{k} {signed(v)}" for k, v in c.score_deltas.items())),
                ]
                for c in moved
            ],
        )
    if comparison.evaluator_deltas:
        out += table(
            ["key", "mean delta"],
            [[md(k), signed(v)] for k, v in comparison.evaluator_deltas.items()],
        )
    if comparison.tests:
        out += _tests(comparison)
    return out


def _over(summary: Summary) -> str:
    """``, over cases`` when the pass rate's interval counts cases (a run with repetitions)."""
    interval = summary.pass_rate_interval
    return ", over cases" if interval is not None and interval.method == "cluster_wilson" else ""


def _tests(comparison: Comparison) -> list[str]:
    """The pooled paired tests, then the cases whose own test is significant."""
    out = [f"### Paired tests (alpha {number(comparison.alpha)})", ""]
    return out + table(
        ["case", "on", "test", "pairs", "effect (B − A)", "p", "p adj.", "verdict"],
        [
            [
                "all cases" if t.case_id is None else md(t.case_id),
                md(test_subject(t)),
                md(t.test),
                str(t.pairs),
                test_effect(t),
                p_value(t.p_value),
                p_value(t.p_adjusted),
                test_verdict(t),
            ]
            for t in (*pooled_tests(comparison), *significant_cases(comparison))
        ],
    )
