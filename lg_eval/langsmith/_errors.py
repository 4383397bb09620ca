"""Errors of the LangSmith integration."""

from __future__ import annotations

from lg_eval.errors import LgEvalError


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


__all__ = [
    "LangSmithDatasetError",
    "LangSmithIntegrationError",
    "MissingAPIKeyError",
    "MissingTargetError",
    "OfflineError",
]
