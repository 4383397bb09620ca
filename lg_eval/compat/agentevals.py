"""agentevals' names, returning agentevals' dicts: swap ``from agentevals.… import X``
for ``from lg_eval.compat.agentevals import X``.

Every name takes agentevals' arguments and returns what agentevals returns
(``{"key", "score", "comment": None, "metadata": None}`` for the match evaluators,
the reasoning as ``comment`` for the judges, agentevals' extraction dict). The
scores are lg_eval's, which are agentevals' except where agentevals 0.0.9 is
wrong: first-fit pairing under partial argument rules, arguments swapped in the
subset direction, and the thread shapes its extraction misreads (see
docs/agentevals.md). A field path of ``tool_args_match_overrides`` that a call
lacks reads as ``None``, as in agentevals.
"""

from __future__ import annotations

from lg_eval.compat._common import (
    MATCH_DOC,
    create_async_graph_trajectory_llm_as_judge,
    create_async_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)
from lg_eval.compat._shape import bare, peer_factories
from lg_eval.evaluators._tool_match import create_trajectory_match_evaluator as own_match
from lg_eval.extract import (
    aextract_langgraph_trajectory_from_thread,
    extract_langgraph_trajectory_from_snapshots,
    extract_langgraph_trajectory_from_thread,
)

create_trajectory_match_evaluator, create_async_trajectory_match_evaluator = peer_factories(
    own_match,
    bare,
    name="create_trajectory_match_evaluator",
    doc=MATCH_DOC.format(peer="agentevals'", rule="reads as ``None``", own=""),
)

__all__ = [
    "aextract_langgraph_trajectory_from_thread",
    "create_async_graph_trajectory_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_graph_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
    "extract_langgraph_trajectory_from_snapshots",
    "extract_langgraph_trajectory_from_thread",
    "graph_trajectory_strict_match",
    "graph_trajectory_strict_match_async",
]
