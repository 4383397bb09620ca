"""Terminal rendering (rich): a summary table, per-evaluator and per-tag tables, the failed
cases with their trajectory difference, and the trend and comparison when present.

Content is only ever handed to rich as :class:`rich.text.Text` built from
:func:`~lg_eval.reports._text.visible`: rich never parses it as markup (``[link=…]``
stays text) and no control character or ANSI/OSC escape from a run reaches the
terminal (``\\x1b`` shows as ``␛``).
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from lg_eval._arguments import validated
from lg_eval._visible import visible
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import Comparison, ScoreRow
from lg_eval.reports._model import (
    STATUSES,
    Report,
    ReportCase,
    agreement_text,
    change_counts,
    changed,
    kind_label,
    pooled_tests,
    reason,
    shown_disagreements,
    significant_cases,
    verdict_word,
)
from lg_eval.reports._text import (
    Column,
    Step,
    dataset_changes,
    fitted_table,
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

STATUS_STYLE = {"passed": "green", "failed": "red", "error": "magenta", "timeout": "yellow"}
SAID = "said (the final answer)"


def text(content: object, style: str = "") -> Text:
    """Content as inert rich text: no markup, no control characters."""
    return Text(visible(str(content)), style=style)


@validated
def render_terminal(report: Report, console: Console | None = None) -> None:
    """Print the report to ``console`` (a new :class:`rich.console.Console` by default),
    its tables fitted to the console's width."""
    console = console or Console()
    for renderable in renderables(report, console.width):
        console.print(renderable)


@validated
def render_comparison(report: Report, console: Console | None = None) -> None:
    """Print only the report's comparison (what ``lg-eval compare`` shows): the pass rates,
    the changed cases, the per-key mean deltas and the paired tests, without run B's whole
    report.

    Raises:
        InvalidOptionError: ``report`` is no :class:`Report`, or was built without
            ``comparison=``.
    """
    if report.comparison is None:
        raise InvalidOptionError(
            "render_comparison needs a report built with comparison= (build_report(run_b, "
            "comparison=compare_runs(run_a, run_b)))."
        )
    console = console or Console()
    for part in _comparison(report, console.width):
        console.print(part)
    if report.comparison.tests:
        console.print(_tests(report.comparison, console.width))


def renderables(report: Report, width: int = 80) -> list[RenderableType]:
    """The report's rich renderables, in print order, their tables fitted to ``width``."""
    parts: list[RenderableType] = [_summary(report)]
    for note in report.summary.notes:
        line = Text("note: ", style="yellow")
        line.append_text(text(note_line(note)))
        parts.append(line)
    if report.evaluators:
        parts.append(_evaluators(report, width))
    parts.extend(_calibration(report))
    if report.tags:
        parts.append(_tags(report, width))
    for case in report.failures:
        parts.append(_failed(case))
    unlisted = _unlisted_failures(report)
    if unlisted:
        line = text(f"… and {unlisted} more that did not pass: lg-eval report ", "dim")
        line.append_text(text(report.info.run_id, "dim"))
        line.append_text(text(" lists every result", "dim"))
        parts.append(line)
    for case in report.cases:
        if case.result.status == "passed" and case.no_verdicts:
            parts.append(_passed_without_verdicts(case))
    if report.trend:
        line = Text("trend: ", style="bold")
        for n, (point, moved) in enumerate(
            zip(report.trend, dataset_changes(report.trend), strict=True)
        ):
            if n:
                line.append(" ┆ dataset changed ┆ " if moved else " → ", style="")
            line.append(percent(point.pass_rate), style="bold" if point.current else "")
        parts.append(line)
    if report.comparison:
        parts.extend(_comparison(report, width))
        if report.comparison.tests:
            parts.append(_tests(report.comparison, width))
    return parts


def _unlisted_failures(report: Report) -> int:
    """Results that did not pass and are not among a report's worst listed (``stream_report``
    lists only those; None ``cases_total``: every result is listed)."""
    if report.cases_total is None:
        return 0
    counts = report.summary.counts
    return counts.failed + counts.error + counts.timeout - len(report.failures)


def _summary(report: Report) -> Table:
    info, summary = report.info, report.summary
    table = Table(title=text(f"lg_eval report: {info.dataset}"), show_header=False)
    table.add_column(style="bold")
    table.add_column()
    status_line = Text()
    for status in STATUSES:
        if status_line:
            status_line.append("  ")
        status_line.append(f"{summary.counts.of(status)} {status}", style=STATUS_STYLE[status])
    rows: list[tuple[str, Text]] = [
        ("run", text(info.run_id)),
        ("dataset", text(f"{info.dataset} ({info.dataset_hash[:12]})")),
        ("target", text(info.target)),
        ("status", text(info.status)),
        (
            "pass rate",
            text(
                f"{percent(summary.pass_rate)} {span(summary.pass_rate_interval)} "
                f"of {summary.results} results"
            ),
        ),
        ("results", status_line),
        (
            f"pass@{summary.k} / pass^{summary.k}",
            text(
                f"{percent(summary.pass_at_k)} {span(summary.pass_at_k_interval)} / "
                f"{percent(summary.pass_hat_k)} {span(summary.pass_hat_k_interval)}"
            ),
        ),
        (
            "latency p50 / p95",
            text(f"{seconds(summary.latency_p50_s)} / {seconds(summary.latency_p95_s)}"),
        ),
        ("tokens / cost", text(f"{summary.tokens} / {money(summary.cost)}")),
    ]
    for label, value in rows:
        table.add_row(label, value)
    return table


EVALUATOR_COLUMNS = (
    Column("key", wrap=True),
    Column("pass", "right", priority=1),
    Column("passed", "right"),
    Column("failed", "right"),
    Column("no verdict", "right"),
    Column("errors", "right"),
    Column("mean", "right", priority=2),
    Column("min–max", "right", priority=3),
    Column("pass 95% CI", "right", priority=4),
    Column("mean 95% CI", "right", priority=5),
)
"""The evaluators table's columns; when the width is short the intervals go first, the
counts never (the Markdown and HTML reports show every column)."""


def _evaluators(report: Report, width: int) -> Table:
    rows = [
        (
            text(e.key),
            percent(e.pass_rate),
            str(e.passed),
            str(e.failed),
            str(e.no_verdict),
            str(e.errors),
            number(e.mean),
            f"{number(e.min)}–{number(e.max)}",
            span(e.pass_rate_interval),
            span(e.mean_interval, number),
        )
        for e in report.evaluators
    ]
    if report.calibration:  # each judge's agreement with people, beside its score
        columns = (*EVALUATOR_COLUMNS, Column("agreement", wrap=True, priority=1))
        shown = [
            (*row, text(agreement_text(report, e.key)))
            for row, e in zip(rows, report.evaluators, strict=True)
        ]
        return fitted_table(columns, shown, width, title="evaluators")
    return fitted_table(EVALUATOR_COLUMNS, rows, width, title="evaluators")


def _calibration(report: Report) -> list[RenderableType]:
    """Per labelled key: its agreement with people, and the disagreements with both sides'
    reasoning."""
    parts: list[RenderableType] = []
    for found in report.calibration:
        agreement = found.agreement
        line = Text("calibration: ", style="bold")
        line.append_text(
            text(
                f"{found.key} {found.summary()}; agreement {percent(agreement.agreement.value)}, "
                f"TPR {percent(agreement.tpr.value)}, TNR {percent(agreement.tnr.value)}, "
                f"precision {percent(agreement.precision.value)}; "
                f"{len(found.disagreements)} disagreements"
            )
        )
        parts.append(line)
        for item in shown_disagreements(found):
            said = (
                f"{item.case_id} ({item.run_id}): judge {verdict_word(item.judge)}: "
                f"{item.judge_comment or '–'} | person {verdict_word(item.human)} "
                f"({', '.join(item.labelers)}): {item.note or '–'}"
            )
            parts.append(Padding(text(said), (0, 0, 0, 2)))
    return parts


def _tags(report: Report, width: int) -> Table:
    columns = (
        Column("tag", wrap=True),
        *(Column(c, "right") for c in ("results", *STATUSES)),
        Column("pass rate", "right"),
    )
    rows: list[list[Text | str]] = [
        [
            text(t.tag),
            str(t.counts.total),
            *(str(t.counts.of(s)) for s in STATUSES),
            percent(t.pass_rate),
        ]
        for t in report.tags
    ]
    return fitted_table(columns, rows, width, title="tags")


def _failed(case: ReportCase) -> RenderableType:
    result = case.result
    header = Text("✗ ", style=STATUS_STYLE[result.status])
    header.append_text(text(case.label, "bold"))
    header.append(f"  {result.status}", style=STATUS_STYLE[result.status])
    if result.tags:
        header.append_text(text(f"  [{', '.join(result.tags)}]", "dim"))
    header.append(f"  {seconds(result.latency_s)}", style="dim")
    parts: list[RenderableType] = [header]
    if result.error:
        parts.append(Padding(text(f"error: {result.error}", "magenta"), (0, 0, 0, 2)))
    for line in case.failing_checks:
        note = text(f"{line.key} = {number(line.score)}", "red")
        if line.error or line.comment:
            note.append_text(text(f": {line.error or line.comment}"))
        parts.append(Padding(note, (0, 0, 0, 2)))
    for line in case.no_verdicts:
        parts.append(Padding(_no_verdict(line), (0, 0, 0, 2)))
    if case.shows_answer:
        parts.extend(Padding(table, (0, 0, 0, 2)) for table in _answer(case))
    if case.diff:
        diff = Table(title="expected vs actual", title_justify="left")
        for column in ("turn", "expected", "actual", "difference"):
            diff.add_column(column)
        for d in case.diff:
            diff.add_row(
                str(d.turn + 1),
                _steps(d.expected),
                _steps(d.actual),
                text(d.reason or "same", "red" if d.reason else "green"),
            )
        parts.append(Padding(diff, (0, 0, 0, 2)))
    if result.turns:
        played = Table(title="turns played", title_justify="left")
        for column in ("turn", "kind", "sent", "asked"):
            played.add_column(column)
        for t in result.turns:
            asked = text("; ".join(value_text(a.get("value")) for a in t.asked))
            if t.error:
                asked.append_text(text(f" error: {t.error}", "magenta"))
            sent = "" if t.sent is None else value_text(t.sent)
            played.add_row(f"turns[{t.index}]", text(kind_label(t)), text(sent), asked)
        parts.append(Padding(played, (0, 0, 0, 2)))
    for judged in case.judge_notes:
        reasoning = text(f"judge {judged.key} = {number(judged.score)}: ", "cyan")
        reasoning.append_text(text(judged.comment or ""))
        parts.append(Padding(reasoning, (0, 0, 0, 2)))
    return Group(*parts)


def _answer(case: ReportCase) -> list[Table]:
    """What was expected beside what the agent said last; then its answer per turn."""
    said = Table(title="expected vs said", title_justify="left")
    said.add_column(case.expected_label)
    said.add_column(SAID)
    said.add_row(
        _or_dim(case.expected_text, "no expected output"),
        _or_dim(case.result.output, "no answer"),
    )
    if not case.turn_answers:
        return [said]
    per_turn = Table(title="answers per turn", title_justify="left")
    per_turn.add_column("turn")
    per_turn.add_column("said")
    for number_, answer in case.turn_answers:
        per_turn.add_row(str(number_), text(answer))
    return [said, per_turn]


def _or_dim(content: str | None, missing: str) -> Text:
    return Text(missing, style="dim") if content is None else text(content)


def _passed_without_verdicts(case: ReportCase) -> RenderableType:
    """A passed case whose other feedback gave no verdict: each one and its reason."""
    header = Text("✓ ", style="green")
    header.append_text(text(case.label, "bold"))
    header.append("  passed", style="green")
    notes = [Padding(_no_verdict(line), (0, 0, 0, 2)) for line in case.no_verdicts]
    return Group(header, *notes)


def _no_verdict(row: ScoreRow) -> Text:
    note = text(f"{row.key}: no verdict", "yellow")
    note.append_text(text(f": {reason(row)}"))
    return note


def _steps(steps: list[Step]) -> Text:
    out = Text()
    for n, step in enumerate(steps):
        if n:
            out.append(" → ", style="dim")
        out.append_text(text(step.name, "bold red" if step.differs else ""))
    return out or Text("–")


COMPARISON_COLUMNS = (
    Column("case", wrap=True),
    Column("change"),
    Column("status", priority=1),
    Column("score changes (B − A)", wrap=True),
)
TEST_COLUMNS = (
    Column("case", wrap=True),
    Column("on", wrap=True),
    Column("verdict"),
    Column("effect (B − A)", wrap=True, priority=1),
    Column("p", "right", priority=2),
    Column("p adj.", "right", priority=3),
    Column("pairs", "right", priority=4),
    Column("test", priority=5),
)


def _comparison(report: Report, width: int) -> list[RenderableType]:
    """The changed cases (with the scores that moved), then the mean change per key."""
    comparison = report.comparison
    assert comparison is not None
    style = {"regressed": "red", "improved": "green", "added": "cyan", "removed": "yellow"}
    rows = [
        (
            text(f"{change.case_id}#{change.repetition}" if change.repetition else change.case_id),
            Text(change.change, style=style[change.change]),
            text(f"{change.status_a or '–'} → {change.status_b or '–'}"),
            text(", ".join(f"{k} {signed(v)}" for k, v in change.score_deltas.items() if v)
                 or "none"),
        )
        for change in changed(comparison)
    ]  # fmt: skip
    title = text(
        f"{comparison.run_b} against {comparison.run_a}: pass rate "
        f"{percent(comparison.pass_rate_a)} → {percent(comparison.pass_rate_b)}"
    )
    table = fitted_table(COMPARISON_COLUMNS, rows, width, title=title)
    counted = ", ".join(f"{n} {change}" for change, n in change_counts(comparison).items())
    table.caption = f"{counted}; {table.caption}" if table.caption else counted
    moved = [f"{k} {signed(v)}" for k, v in comparison.evaluator_deltas.items() if v]
    kept = len(comparison.evaluator_deltas) - len(moved)
    line = Text("mean score change (B − A): ", style="bold")
    line.append_text(text(", ".join(moved) or "none"))
    if moved and kept:
        line.append(f"; {kept} other keys unchanged")
    return [table, line] if comparison.evaluator_deltas else [table]


def _tests(comparison: Comparison, width: int) -> Table:
    """The pooled paired tests, then the cases whose own test is significant."""
    style = {"significant regression": "red", "significant improvement": "green"}
    rows = []
    for test in (*pooled_tests(comparison), *significant_cases(comparison)):
        verdict = test_verdict(test)
        rows.append(
            (
                text("all cases" if test.case_id is None else test.case_id),
                text(test_subject(test)),
                Text(verdict, style=style.get(verdict, "")),
                text(test_effect(test)),
                p_value(test.p_value),
                p_value(test.p_adjusted),
                str(test.pairs),
                test.test,
            )
        )
    title = f"paired tests (alpha {number(comparison.alpha)})"
    return fitted_table(TEST_COLUMNS, rows, width, title=title)
