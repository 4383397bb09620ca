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


class LeaseLostError(RunInUseError):
    """The run lost its run id's lease (it was paused past the expiry and another run took
    the id over): it stops before writing again; ``owner`` names the run holding it now."""


class SweepError(LgEvalError):
    """The sweep cannot run: a saver that cannot list threads, a bad filter."""


class ReviewerError(LgEvalError):
    """The simulated reviewer could not answer (the model failed, or its answer is unusable)."""


class SimulatedUserError(LgEvalError):
    """The simulated user could not take its turn (its model failed, or kept answering in a
    shape it was not asked for); ``played`` is the :class:`lg_eval.play.PlayedCase` recorded
    up to that point."""

    def __init__(self, message: str, *, played: object = None) -> None:
        super().__init__(message)
        self.played = played


class InfrastructureError(LgEvalError):
    """An infrastructure failure (a lost connection, an ``OperationalError``) that the player
    recorded as a turn error instead of raising; the runner plays the attempt again."""


class EvaluatorTimeoutError(LgEvalError, TimeoutError):
    """An evaluator run by an eval node did not finish within its timeout (or the node's)."""


class ReferenceKeyError(LgEvalError, LookupError):
    """An ``EvalSpec``'s ``reference_key`` is not a key of the reference it was given."""


class InvalidScoreError(LgEvalError, ValueError):
    """An evaluator's score is not a bool, None or a finite number inside its range."""


class LangSmithIntegrationError(LgEvalError):
    """Base class of the errors :mod:`lg_eval.langsmith` raises."""


class OfflineError(LangSmithIntegrationError, RuntimeError):
    """Something asked the offline client to reach LangSmith; nothing was sent."""


class MissingAPIKeyError(LangSmithIntegrationError):
    """A LangSmith experiment or dataset call needs ``LANGSMITH_API_KEY`` and none is set."""


class MissingTargetError(LangSmithIntegrationError, ValueError):
    """An experiment has no graph to run (none given, or the dataset's came from remote data)."""


class LangSmithDatasetError(LangSmithIntegrationError, ValueError):
    """A LangSmith dataset's examples cannot be read as lg_eval cases (or the reverse)."""


class ServerError(LgEvalError):
    """A LangGraph Server could not answer (down, timed out, or a 5xx after retries)."""


class ServerAuthError(ServerError, PermissionError):
    """A LangGraph Server refused the credentials (HTTP 401 or 403)."""


class AssistantNotFoundError(ServerError, LookupError):
    """A LangGraph Server has no assistant (nor graph) of the name a run targets."""


class ServerRunError(LgEvalError):
    """A run on a LangGraph Server failed there: the graph raised.

    What is raised is a subclass named after the type the server reports (a graph's
    ``ValueError("boom")`` arrives as a ``ServerRunError`` subclass named ``ValueError``
    whose message is ``boom``), so a played turn records the error as the same run does
    locally; ``remote_type`` holds that name.
    """

    remote_type: str = "ServerRunError"


__all__ = [
    "AssistantNotFoundError",
    "CheckpointNotFoundError",
    "CheckpointerError",
    "CheckpointerURLError",
    "DatasetError",
    "EvaluatorTimeoutError",
    "ExtractionError",
    "GraphMismatchError",
    "InfrastructureError",
    "InvalidConfigError",
    "InvalidOptionError",
    "InvalidScoreError",
    "JudgeError",
    "LangSmithDatasetError",
    "LangSmithIntegrationError",
    "LeaseLostError",
    "LgEvalError",
    "MissingAPIKeyError",
    "MissingCheckpointerError",
    "MissingTargetError",
    "OfflineError",
    "OutputWriteError",
    "ReferenceKeyError",
    "ReviewerError",
    "RunInUseError",
    "ScriptMismatchError",
    "ServerAuthError",
    "ServerError",
    "ServerRunError",
    "SimulatedUserError",
    "StoreError",
    "SweepError",
    "ThreadNotFoundError",
    "TrajectoryFormatError",
]
