"""How lg_eval names an error and shows a value it did not make, in one line of text.

Feedback, results, replies and error messages all name an exception as
``'ErrorType: message'``; the message comes from the exception's ``__str__``, which is
code lg_eval does not control and may itself raise. :func:`describe_error` and
:func:`safe_text` survive that, so the one place an error is described never becomes a
second error. ``lg_eval._feedback`` re-exports both.
"""

from __future__ import annotations

from typing import Any


def describe_error(error: BaseException) -> str:
    """``'ErrorType: message'``, how feedback, results and replies name an error; it
    survives an exception whose ``__str__`` raises (:func:`safe_text`)."""
    return f"{type(error).__name__}: {safe_text(error)}"


def safe_text(value: Any, limit: int = 2000) -> str:
    """``str(value)`` (else its ``repr``, else a placeholder), at most ``limit`` characters."""
    for render in (str, repr):
        try:
            text = render(value)
        except Exception:
            continue
        if isinstance(text, str):
            return text if len(text) <= limit else text[:limit] + "…"
    return f"<{type(value).__name__} that cannot be shown>"
