"""Whether a run scores in the scoring process (:mod:`._scoring_process`) or inline.

The scoring process reads the threads and writes the results through its own connections,
and runs the evaluators there, so it is used only when that changes nothing but speed:

* the checkpointer and the store are named (a URL or a path, or the defaults), not objects
  (an object's connection cannot be shared with another process; ``memory://`` lives in
  this process only);
* every evaluator is one of lg_eval's built-in, deterministic ones (a registry name that
  still names the built-in, or a built-in check): a judge needs the run's judge cache and
  rate limiter, and your own evaluator may keep state or have side effects this process
  would not see;
* the run has no per-case ``timeout`` (a case cancelled here could still be stored there);
* the process can fork (Linux; with ``scoring="auto"``, also only from the process's
  single Python thread, see :func:`._scoring_process.fork_is_safe`);
* the target is not a deployed assistant (a :class:`~lg_eval.server.ServerTarget` or a
  ``RemoteGraph``: its threads are on the server, read through this process's connection);
* with ``scoring="auto"``, the run has at least :data:`AUTO_MIN_CASES` cases × repetitions:
  starting and stopping the process costs about 40 ms, more than it saves on a few cases.

``scoring="process"`` asks for it and says which condition is not met;
``scoring="auto"`` uses it when all are; ``scoring="inline"`` never does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators.registry import is_builtin
from lg_eval.experiments._scoring_process import ScoringSpec, can_fork, fork_is_safe
from lg_eval.experiments._upstream import Dataset, parse_checkpointer_url
from lg_eval.experiments.redaction import Redactor
from lg_eval.server import as_server_target

Scoring = Literal["auto", "process", "inline"]
SCORINGS: tuple[Scoring, ...] = ("auto", "process", "inline")
AUTO_MIN_CASES = 64
"""The fewest cases × repetitions ``scoring="auto"`` starts the scoring process for."""


def checked_scoring(value: object) -> Scoring:
    """``value`` if it is one of :data:`SCORINGS`, else an error naming ``scoring``."""
    if value not in SCORINGS:
        raise InvalidOptionError(f"scoring={value!r}: use one of {', '.join(SCORINGS)}.")
    return value


def scoring_spec(
    scoring: Scoring,
    *,
    run_id: str,
    target: Any,
    dataset: Dataset,
    checkpointer: Any,
    store: Any,
    timeout: float | None,
    repetitions: int,
    thresholds: Mapping[str, float] | None,
    require_verdict: bool,
    retries: int,
    redactor: Redactor | None,
    lease_token: str = "",
) -> ScoringSpec | None:
    """The scoring process's spec when the run scores there, else None (inline).

    Raises:
        InvalidOptionError: ``scoring`` is not one of :data:`SCORINGS`, or it is
            ``"process"`` and the run cannot use the process (the message says why).
    """
    if checked_scoring(scoring) == "inline":
        return None
    problem = (
        "a deployed assistant's threads are read back from its server, inline"
        if as_server_target(target) is not None
        else _problem(dataset, checkpointer, store, timeout)
    )
    if problem is None and not can_fork():
        problem = "this platform cannot fork a process"
    if scoring == "process":
        if problem is not None:
            raise InvalidOptionError(f"scoring='process' is not possible here: {problem}.")
    elif (
        problem is not None
        or not fork_is_safe()
        or len(dataset.cases) * repetitions < AUTO_MIN_CASES
    ):
        return None
    return ScoringSpec(
        run_id=run_id,
        target=target,
        dataset=dataset,
        checkpointer=checkpointer,
        store=store,
        thresholds=dict(thresholds or {}),
        require_verdict=require_verdict,
        retries=retries,
        redactor=redactor,
        lease_token=lease_token,
    )


def _problem(dataset: Dataset, checkpointer: Any, store: Any, timeout: float | None) -> str | None:
    """Why the run cannot score in another process, or None."""
    if isinstance(checkpointer, BaseCheckpointSaver):
        return "the checkpointer is a saver object; name it by URL"
    if checkpointer is not None and parse_checkpointer_url(checkpointer).kind == "memory":
        return "a memory:// checkpointer lives in this process only"
    if store is not None and not isinstance(store, str | Path):
        return "the store is an object; name it by URL or path"
    if timeout is not None:
        return "a run with a per-case timeout scores inline"
    for refs in (dataset.evaluators, *(case.evaluators for case in dataset.cases)):
        for ref in refs or ():
            if not _builtin(ref.name, ref.options):
                return f"evaluator {ref.name!r} is not one of lg_eval's built-in evaluators"
    return None


def _builtin(name: str, options: Mapping[str, Any]) -> bool:
    """A built-in, and for ``composite`` every part named is one too (a part given as
    code is not)."""
    if not is_builtin(name):
        return False
    if name != "composite":
        return True
    parts = options.get("evaluators", ())
    if isinstance(parts, Mapping):
        parts = parts.values()
    return all(isinstance(part, str) and is_builtin(part) for part in parts)


__all__ = ["AUTO_MIN_CASES", "SCORINGS", "Scoring", "checked_scoring", "scoring_spec"]
