"""openevals' trajectory names, returning openevals' dicts: swap
``from openevals.trajectory.… import X`` for ``from lg_eval.compat.openevals import X``.

The match evaluators return ``{"key", "score", "comment": None, "metadata": None}``
and follow openevals' rule since 0.2.1: a field path of
``tool_args_match_overrides`` missing from either call's arguments is a non-match.
The scores are lg_eval's, which are openevals' except where first-fit pairing
misses a pairing under partial argument rules (see docs/agentevals.md).
"""

from __future__ import annotations

from lg_eval._evaluator import Evaluator
from lg_eval.compat._common import (
    MATCH_DOC,
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)
from lg_eval.compat._shape import bare, peer_factories
from lg_eval.evaluators._tool_match import (
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
    TrajectoryMatchMode,
)
from lg_eval.evaluators._tool_match import create_trajectory_match_evaluator as own_match


def _required_fields_match(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Evaluator:
    """lg_eval's trajectory match under openevals' field-path rule."""
    return own_match(
        trajectory_match_mode=trajectory_match_mode,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
        require_override_fields=True,
    )


create_trajectory_match_evaluator, create_async_trajectory_match_evaluator = peer_factories(
    _required_fields_match,
    bare,
    name="create_trajectory_match_evaluator",
    doc=MATCH_DOC.format(
        peer="openevals'",
        rule="makes the pair a non-match, on either side",
        own=" (with ``require_override_fields=True``)",
    ),
)

__all__ = [
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
]
