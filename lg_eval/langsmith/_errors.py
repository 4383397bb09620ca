"""Errors of the LangSmith integration (defined in :mod:`lg_eval.errors`, with every other)."""

from __future__ import annotations

from lg_eval.errors import (
    LangSmithDatasetError as LangSmithDatasetError,
)
from lg_eval.errors import (
    LangSmithIntegrationError as LangSmithIntegrationError,
)
from lg_eval.errors import (
    MissingAPIKeyError as MissingAPIKeyError,
)
from lg_eval.errors import (
    MissingTargetError as MissingTargetError,
)
from lg_eval.errors import (
    OfflineError as OfflineError,
)
