"""What a run is asked to do: :class:`RunOptions`, one frozen record built by keyword.

The local runner, the executor driver and the workers it ships to all read the same
record; it checks itself when it is made, so a bad option fails before anything runs,
wherever the run is started from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval.arguments import checked_count, checked_flag, checked_fraction, checked_seconds
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments._scoring_choice import Scoring, checked_scoring
from lg_eval.experiments._upstream import Dataset
from lg_eval.experiments.judge_cache import JudgeCache
from lg_eval.experiments.redaction import RedactOption, make_redactor
from lg_eval.feedback import checked_thresholds
from lg_eval.judges import RateLimits

if TYPE_CHECKING:
    from lg_eval.experiments._upstream import Reviewer
    from lg_eval.experiments.store import ResultStore

Progress = Callable[[int, int, int, int], None]
"""``progress(done, total, passed, failed)``, called as each case finishes (``failed``
counts every status but ``passed``; a resumed run starts from what the store holds)."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """The options of one experiment run (see :func:`~lg_eval.experiments.run_experiment`
    for what each means). Made by keyword; checked when made.

    Raises:
        InvalidOptionError: an option out of its range, named with what it takes.
    """

    target: Any
    dataset: Dataset | str | Path
    checkpointer: BaseCheckpointSaver[Any] | str | None = None
    store: ResultStore | str | Path | None = None
    run_id: str | None = None
    concurrency: int = 4
    repetitions: int = 1
    timeout: float | None = None
    retries: int = 1
    thresholds: Mapping[str, float] | None = None
    fail_under: float | None = None
    require_verdict: bool = False
    judge_cache: bool | str | Path | JudgeCache = True
    progress: Progress | None = None
    redact: RedactOption = None
    langsmith: bool = False
    reviewer: Reviewer | None = None
    judge_limits: RateLimits | Mapping[str, Any] | None = None
    scoring: Scoring = "auto"

    def __post_init__(self) -> None:
        checked_count(self.concurrency, "concurrency", 1)
        checked_count(self.repetitions, "repetitions", 1)
        checked_count(self.retries, "retries", 0)
        if self.thresholds is not None:
            object.__setattr__(self, "thresholds", checked_thresholds(self.thresholds))
        object.__setattr__(self, "timeout", checked_seconds(self.timeout, "timeout"))
        if self.fail_under is not None:
            checked_fraction(self.fail_under, "fail_under", zero=True)
        checked_flag(self.require_verdict, "require_verdict")
        checked_flag(self.langsmith, "langsmith")
        checked_scoring(self.scoring)
        if self.run_id is not None and not (isinstance(self.run_id, str) and self.run_id):
            raise InvalidOptionError(f"run_id={self.run_id!r:.80}: use a non-empty text, or None.")
        if not isinstance(self.judge_cache, bool | str | Path | JudgeCache):
            raise InvalidOptionError(
                f"judge_cache={self.judge_cache!r:.80}: use True, False, a path or a JudgeCache."
            )
        make_redactor(self.redact)  # refuses what is no function or list of patterns
        if self.progress is not None and not callable(self.progress):
            raise InvalidOptionError("progress= takes a function (done, total, passed, failed).")
        if self.judge_limits is not None and not isinstance(self.judge_limits, RateLimits):
            # Checked (InvalidOptionError naming the field) before anything runs.
            object.__setattr__(self, "judge_limits", RateLimits.of(self.judge_limits))

    @property
    def limits(self) -> RateLimits | None:
        """``judge_limits`` as the :class:`~lg_eval.judges.RateLimits` it was checked into."""
        assert self.judge_limits is None or isinstance(self.judge_limits, RateLimits)
        return self.judge_limits


__all__ = ["Progress", "RunOptions"]
