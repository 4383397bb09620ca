"""Drop-ins for agentevals and openevals: their names, arguments and result dicts.

Moving over is a change of import: ``from agentevals.… import X`` becomes
``from lg_eval.compat.agentevals import X``, ``from openevals.trajectory.… import X``
becomes ``from lg_eval.compat.openevals import X``. Each name returns exactly what
the peer returns (``comment`` and ``metadata`` ``None`` for the match evaluators,
the model's reasoning for the judges), computed by lg_eval's own evaluators, whose
feedback, used directly, says what differed.

The two modules differ where the peers' rules do: a field path of
``tool_args_match_overrides`` that a call lacks reads as ``None`` in agentevals
and fails the match in openevals (since 0.2.1). The names whose rules agree are
also here: the graph trajectory names and the judges.

Nothing else in lg_eval imports this package.
"""

from lg_eval.compat.agentevals import (
    aextract_langgraph_trajectory_from_thread,
    create_async_graph_trajectory_llm_as_judge,
    create_async_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
    extract_langgraph_trajectory_from_snapshots,
    extract_langgraph_trajectory_from_thread,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)

__all__ = [
    "aextract_langgraph_trajectory_from_thread",
    "create_async_graph_trajectory_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    "create_graph_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "extract_langgraph_trajectory_from_snapshots",
    "extract_langgraph_trajectory_from_thread",
    "graph_trajectory_strict_match",
    "graph_trajectory_strict_match_async",
]
