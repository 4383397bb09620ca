"""Typed errors raised by lg_eval.

Every message says what went wrong *and* what to do next, so a user never has
to read a traceback from deep inside LangGraph to understand bad input.
"""

from __future__ import annotations


class LgEvalError(Exception):
    """Base class of every error lg_eval raises on purpose."""


class ExtractionError(LgEvalError):
    """A thread could not be turned into a trajectory."""


class MissingCheckpointerError(ExtractionError):
    """The graph was compiled without a checkpointer, so it has no history to read."""


class InvalidConfigError(ExtractionError, ValueError):
    """The run config lacks what extraction needs (usually ``thread_id``)."""


class ThreadNotFoundError(ExtractionError, LookupError):
    """The checkpointer holds no checkpoints for the requested thread."""


class CheckpointNotFoundError(ExtractionError, LookupError):
    """The requested ``checkpoint_id`` is not part of the thread."""


class GraphMismatchError(ExtractionError, ValueError):
    """The graph passed to extraction did not write the thread (it lacks stored node names)."""


class TrajectoryFormatError(LgEvalError, ValueError):
    """A trajectory or message list does not have the shape an evaluator expects."""


class InvalidOptionError(LgEvalError, ValueError):
    """An option (mode, override, ...) is not one of the allowed values."""


class JudgeError(LgEvalError):
    """An LLM judge could not produce a usable verdict."""


class DatasetError(LgEvalError, ValueError):
    """A dataset file or model is invalid; the message names the file, line, case and field."""


class CheckpointerError(LgEvalError):
    """A checkpointer named by URL could not be opened (messages show the URL redacted)."""


class CheckpointerURLError(CheckpointerError, InvalidOptionError):
    """A checkpointer URL is malformed or uses a scheme lg_eval does not know."""


class ScriptMismatchError(LgEvalError):
    """A played case's graph did not ask what its script expected (or asked when it did not).

    ``turn`` is the index of the scripted turn (``turns[turn]``) where the mismatch
    showed, ``played`` the :class:`lg_eval.play.PlayedCase` recorded up to that point.
    """

    def __init__(self, message: str, *, turn: int | None = None, played: object = None) -> None:
        super().__init__(message)
        self.turn = turn
        self.played = played


class ScoringProcessError(LgEvalError):
    """A run's scoring process could not score or store a case, or it exited mid-run; the
    run stops, and running it again with the same ``run_id`` resumes it."""


class StoreError(LgEvalError):
    """The results store could not be opened or used, or does not hold what was asked for
    (messages show its URL without the password)."""


class OutputWriteError(LgEvalError):
    """A report or output file could not be written; the old file, if any, is unchanged."""


class RunInUseError(StoreError):
    """Another live run holds the run id (its lease has not expired); ``owner`` names it."""

    def __init__(self, message: str, *, owner: str | None = None) -> None:
        super().__init__(message)
        self.owner = owner


__all__ = [
    "CheckpointNotFoundError",
    "CheckpointerError",
    "CheckpointerURLError",
    "DatasetError",
    "ExtractionError",
    "GraphMismatchError",
    "InvalidConfigError",
    "InvalidOptionError",
    "JudgeError",
    "LgEvalError",
    "MissingCheckpointerError",
    "OutputWriteError",
    "RunInUseError",
    "ScoringProcessError",
    "ScriptMismatchError",
    "StoreError",
    "ThreadNotFoundError",
    "TrajectoryFormatError",
]
