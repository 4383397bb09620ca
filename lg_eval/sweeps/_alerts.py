"""Alerts of a watch: a feedback key's pass rate (or mean) over a window, below a threshold,
calls a hook with the failing threads.

``Alert(key="hitl_policy", below=1.0, window="1h", hook="./page-oncall.sh")`` reads,
after each pass of the watch that stored results, the key's rows of the sweep's results
finished in the last hour (from the results store, so every run of the sweep counts, also
those of an earlier watch process). When the value is below the threshold and the window
holds failing threads the alert has not reported yet, the hook is called once with them:

* a command (split as a shell would, run without a shell) gets the payload as JSON on its
  standard input; a non-zero exit is a failed call;
* an ``http://`` or ``https://`` URL gets it as the JSON body of a POST; an answer other
  than 2xx is a failed call.

A failed call is reported (:attr:`Fired.error`) and does not stop the watch. The payload
is redacted as the stored results are: the watch's ``redact`` patterns, then every value of
an environment variable named like a secret; a webhook URL is shown by its host only (a
chat webhook's path is its secret).

Payload::

    {"alert": {"key", "stat", "below", "window_seconds"}, "sweep", "at", "value",
     "results", "failing_total", "failing": [{"thread_id", "checkpoint_id", "run_id",
     "score", "comment"}, ...]}
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from lg_eval._arguments import invalid_option, is_finite_number
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import Redactor, ResultStore, redact_strings, scrub_secrets
from lg_eval.sweeps._listing import duration_seconds

MAX_LISTED = 50
"""Failing threads listed in one payload (``failing_total`` counts them all)."""
HOOK_TIMEOUT = 30.0
"""Seconds a hook may take before its call counts as failed."""


class Alert(BaseModel):
    """``stat`` of feedback ``key`` over the last ``window`` below ``below`` calls ``hook``.

    ``stat``: ``pass_rate`` (results with a verdict that passed, over those with a verdict)
    or ``mean`` (of the scores given). ``window``: seconds, or a duration (``"90s"``,
    ``"30m"``, ``"1h"``, ``"1d"``). ``min_results``: results with a value the window needs
    before the alert can fire. ``hook``: a command, or an ``http(s)://`` URL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1)
    below: float
    hook: str = Field(min_length=1, repr=False)  # a webhook's path may be its secret
    stat: Literal["pass_rate", "mean"] = "pass_rate"
    window: float = 3600.0
    min_results: int = Field(default=1, ge=1)

    @field_validator("below")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not is_finite_number(value):
            raise PydanticCustomError("finite", "a finite number")
        return value

    @field_validator("window", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> float:
        if isinstance(value, str):
            seconds = duration_seconds(value)
            if seconds is None:
                raise PydanticCustomError("window", "seconds, or a duration: 30m, 1h, 1d")
            value = seconds
        if not is_finite_number(value) or value <= 0:
            raise PydanticCustomError("window", "a number of seconds > 0, or a duration: 30m, 1h")
        return float(value)

    @classmethod
    def of(cls, value: Alert | dict[str, Any]) -> Alert:
        """``value`` as an alert; bad fields raise InvalidOptionError naming them."""
        if isinstance(value, Alert):
            return value
        if not isinstance(value, dict):
            raise InvalidOptionError(
                f"alerts: {value!r:.80} is no alert; pass Alert(key=..., below=..., hook=...) "
                "or a dict of those fields."
            )
        try:
            return cls(**value)
        except ValidationError as exc:
            raise InvalidOptionError(f"alerts: {invalid_option(exc)}") from None


@dataclass(frozen=True)
class Fired:
    """One call of an alert's hook: what it was told, and how the call went."""

    alert: Alert
    value: float
    results: int
    failing: list[dict[str, Any]]
    failing_total: int
    error: str | None = None
    """Why the call failed (None: the hook took it)."""


@dataclass
class AlertState:
    """The failing results each alert already reported (kept for its window)."""

    reported: dict[int, dict[tuple[str, str], datetime]] = field(default_factory=dict)


def check_alerts(
    alerts: Sequence[Alert],
    store: ResultStore,
    sweep: str,
    state: AlertState,
    redactor: Redactor | None,
    *,
    now: datetime | None = None,
) -> list[Fired]:
    """Evaluate every alert over the store's results of ``sweep`` and call the hooks of
    those that fire (see the module's docstring)."""
    now = now or datetime.now(UTC)
    fired = []
    for number, alert in enumerate(alerts):
        since = now - timedelta(seconds=alert.window)
        rows = _rows(store, sweep, alert.key, since)
        value, counted = _value(alert, rows)
        seen = state.reported.setdefault(number, {})
        for mark in [m for m, at in seen.items() if at < since]:
            del seen[mark]
        if value is None or counted < alert.min_results or value >= alert.below:
            continue
        failing = [r for r in rows if r["passed"] == 0]
        new = [r for r in failing if (r["run_id"], r["thread_id"]) not in seen]
        if not new:
            continue
        for row in new:
            seen[(row["run_id"], row["thread_id"])] = now
        listed = [_entry(row) for row in new[:MAX_LISTED]]
        payload = {
            "alert": {
                "key": alert.key,
                "stat": alert.stat,
                "below": alert.below,
                "window_seconds": alert.window,
            },
            "sweep": sweep.removeprefix("sweep:"),
            "at": now.isoformat(),
            "value": value,
            "results": counted,
            "failing_total": len(failing),
            "failing": listed,
        }
        shown = scrub_secrets(redact_strings(payload, redactor))
        error = call_hook(alert.hook, shown)
        fired.append(Fired(alert, value, counted, shown["failing"], len(failing), error))
    return fired


def _rows(store: ResultStore, sweep: str, key: str, since: datetime) -> list[dict[str, Any]]:
    """The key's results of the sweep's cases finished since ``since``, with the
    checkpoint each scored."""
    found = store.query(
        "SELECT s.run_id, s.case_id, s.score, s.passed, s.row, t.checkpoint_id"
        " FROM lg_eval_scores s"
        " JOIN lg_eval_cases c ON c.run_id = s.run_id AND c.case_id = s.case_id"
        " AND c.repetition = s.repetition"
        " JOIN lg_eval_runs r ON r.run_id = s.run_id"
        " LEFT JOIN lg_eval_sweep_threads t ON t.run_id = s.run_id AND t.thread_id = s.case_id"
        " WHERE r.dataset = ? AND (r.finished_at IS NULL OR r.finished_at >= ?)"
        " AND s.key = ? AND c.finished_at >= ? ORDER BY c.finished_at, s.run_id, s.case_id",
        [sweep, since.isoformat(), key, since.isoformat()],
    )
    return [
        {
            "run_id": str(run_id),
            "thread_id": str(case_id),
            "score": score,
            "passed": None if passed is None else int(passed),
            "comment": _comment(row),
            "checkpoint_id": checkpoint_id,
        }
        for run_id, case_id, score, passed, row, checkpoint_id in found
    ]


def _comment(row: Any) -> str | None:
    try:
        comment = json.loads(row).get("comment")
    except (TypeError, ValueError, AttributeError):
        return None
    return comment if isinstance(comment, str) else None


def _value(alert: Alert, rows: list[dict[str, Any]]) -> tuple[float | None, int]:
    if alert.stat == "pass_rate":
        verdicts = [r["passed"] for r in rows if r["passed"] is not None]
        return (sum(verdicts) / len(verdicts) if verdicts else None), len(verdicts)
    scores = [float(r["score"]) for r in rows if is_finite_number(r["score"])]
    return (sum(scores) / len(scores) if scores else None), len(scores)


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "thread_id": row["thread_id"],
        "checkpoint_id": row["checkpoint_id"],
        "run_id": row["run_id"],
        "score": row["score"],
        "comment": row["comment"],
    }


def call_hook(hook: str, payload: dict[str, Any]) -> str | None:
    """Send ``payload`` to ``hook`` (a URL: POSTed as JSON; else a command: JSON on its
    stdin); None when it took it, else why not (secrets of a URL left out)."""
    body = json.dumps(payload, ensure_ascii=False, default=str)
    if hook.startswith(("http://", "https://")):
        try:
            answer = httpx.post(
                hook,
                content=body.encode("utf-8"),
                headers={"Content-Type": "application/json"},
                timeout=HOOK_TIMEOUT,
            )
        except httpx.HTTPError as exc:
            return f"webhook {shown_hook(hook)}: {type(exc).__name__}"
        if not answer.is_success:
            return f"webhook {shown_hook(hook)}: HTTP {answer.status_code}"
        return None
    try:
        done = subprocess.run(
            shlex.split(hook),
            input=body,
            text=True,
            capture_output=True,
            timeout=HOOK_TIMEOUT,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return f"command {shown_hook(hook)}: {type(exc).__name__}"
    if done.returncode != 0:
        return f"command {shown_hook(hook)}: exit code {done.returncode}"
    return None


def shown_hook(hook: str) -> str:
    """A hook as messages show it: a URL by its scheme and host, a command by its program."""
    if hook.startswith(("http://", "https://")):
        parts = urlsplit(hook)
        return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}/…"
    try:
        words = shlex.split(hook)
    except ValueError:
        words = hook.split()
    return words[0] if words else hook
