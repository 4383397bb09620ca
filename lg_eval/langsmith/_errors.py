"""Errors of the LangSmith integration (defined in :mod:`lg_eval.errors`, with every other)."""

from __future__ import annotations

from lg_eval.errors import (
    LangSmithDatasetError,
    LangSmithIntegrationError,
    MissingAPIKeyError,
    MissingTargetError,
    OfflineError,
)

__all__ = [
    "LangSmithDatasetError",
    "LangSmithIntegrationError",
    "MissingAPIKeyError",
    "MissingTargetError",
    "OfflineError",
]
