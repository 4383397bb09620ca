"""What a replay found, per thread: old against new trajectory and scores.

:class:`ReplayResult` is the data model; :meth:`ReplayResult.table` renders it for a
terminal (rich, with thread text shown literally, never as markup, and every control or
bidi character made visible) and :meth:`ReplayResult.to_json` as JSON (bidi controls and
line separators written as JSON escapes).
"""

from __future__ import annotations

import difflib
import json
import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.table import Table
from rich.text import Text

from lg_eval._visible import data_escaped, visible
from lg_eval.play import QuestionChange

ReplayStatus = Literal["replayed", "stopped", "error", "skipped"]


class ScoreChange(BaseModel):
    """One feedback key's score on the original thread and on its replay."""

    model_config = ConfigDict(extra="forbid")
    evaluator: str
    key: str
    old: float | None = Field(default=None, description="On the original thread.")
    new: float | None = Field(default=None, description="On the replay thread.")
    reason: str | None = Field(
        default=None, description="Why a side has no score: its evaluator's error."
    )

    @property
    def delta(self) -> float | None:
        """``new - old``, or None when either side has no score."""
        if self.old is None or self.new is None:
            return None
        return self.new - self.old


class ReplayedThread(BaseModel):
    """One production thread, forked and replayed with the new graph."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(description="The original (production) thread.")
    status: ReplayStatus = Field(
        description="replayed: the new graph ran to the end; stopped: it asked something the "
        "original's humans never answered, or another question than the one they answered "
        "at that node (or paused); error: it raised; skipped: the thread has no such fork "
        "point."
    )
    reason: str | None = None
    fork: str = Field(description="The fork option (last-interrupt, turn:N, before:NODE).")
    fork_checkpoint_id: str | None = None
    replay_thread_id: str | None = Field(
        default=None, description="The fresh thread in the target checkpointer."
    )
    old_steps: list[list[str]] = Field(default_factory=list, description="Nodes per turn.")
    new_steps: list[list[str]] = Field(default_factory=list)
    scores: list[ScoreChange] = Field(default_factory=list)
    graph_calls: int = Field(default=0, description="invoke calls made on the new graph.")
    reviewer_answers: int = Field(default=0, description="Answers the reviewer gave.")
    unused_answers: int = Field(
        default=0, description="Recorded answers and inputs the new graph never asked for."
    )
    questions_changed: list[QuestionChange] = Field(
        default_factory=list,
        description="Recorded answers not sent because the new graph asked another question "
        "at their node: the node, the question answered, the question asked, the answer.",
    )
    reused: bool = Field(
        default=False,
        description="The fork a replay of the same name finished at this newest checkpoint "
        "of the thread: scored again, the new graph not rerun.",
    )

    @property
    def changed(self) -> bool:
        """Whether the new graph ran other nodes, or in another order, than the original.

        Compared on the nodes in order, not per turn: a fork inside a turn makes the
        replay thread's rest of that turn a turn of its own (LangGraph's continue is a
        new run), which is not a change of behaviour.
        """
        return self.status != "skipped" and _flat(self.old_steps) != _flat(self.new_steps)

    @property
    def diff(self) -> list[str]:
        """The nodes only one side ran: ``- review`` (original), ``+ escalate`` (new)."""
        if self.status == "skipped":
            return []
        old, new = _flat(self.old_steps), _flat(self.new_steps)
        return [line for line in difflib.ndiff(old, new) if line[:1] in "+-"]


class ReplayResult(BaseModel):
    """Every replayed thread of one ``replay_threads`` call, in thread id order."""

    model_config = ConfigDict(extra="forbid")
    graph: str = Field(description="The new graph replayed, as given.")
    fork: str
    target: str = Field(description="Where the replay threads were written (URL or saver).")
    run: str = Field(default="", description="The replay's name: forks are replay:<run>:<id>.")
    threads: list[ReplayedThread] = Field(default_factory=list)

    @property
    def changed_thread_ids(self) -> list[str]:
        """The original threads whose trajectory the new graph changed."""
        return [t.thread_id for t in self.threads if t.changed]

    def counts(self) -> dict[str, int]:
        """Threads per status, plus ``changed`` (the trajectory) and ``question_changed``
        (threads where the new graph asked another question than a recorded answer was
        given to)."""
        counts = {s: 0 for s in ("replayed", "stopped", "error", "skipped")}
        for thread in self.threads:
            counts[thread.status] += 1
        counts["changed"] = len(self.changed_thread_ids)
        counts["question_changed"] = sum(bool(t.questions_changed) for t in self.threads)
        return counts

    def to_json(self) -> str:
        """The result with each thread's ``changed`` flag and diff, as indented JSON."""
        data = self.model_dump(mode="json")
        for row, thread in zip(data["threads"], self.threads, strict=True):
            row["changed"], row["diff"] = thread.changed, thread.diff
            for score, change in zip(row["scores"], thread.scores, strict=True):
                score["delta"] = change.delta
        return data_escaped(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))

    def table(self, *, only_changed: bool = False) -> Table:
        """A rich table: thread, status, whether the trajectory changed, score deltas."""
        table = Table(title=f"replay {self.graph} from {self.fork}")
        for column in ("thread", "status", "trajectory", "scores", "note"):
            table.add_column(column)
        for thread in self.threads:
            if only_changed and not thread.changed:
                continue
            table.add_row(
                Text(visible(thread.thread_id)),
                thread.status,
                "changed" if thread.changed else "same",
                Text(visible(", ".join(_delta(s) for s in thread.scores))),
                Text(visible(thread.reason or "; ".join(thread.diff[:4]))),
            )
        return table


def _flat(steps: list[list[str]]) -> list[str]:
    return [node for turn in steps for node in turn]


def _delta(change: ScoreChange) -> str:
    def shown(value: float | None) -> str:
        return "-" if value is None or not math.isfinite(value) else f"{value:.2f}"

    delta = change.delta
    sign = "" if delta is None else f" ({delta:+.2f})"
    return f"{change.key} {shown(change.old)}→{shown(change.new)}{sign}"
