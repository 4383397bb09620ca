"""The drop-ins whose rules are the same in agentevals and openevals (or only agentevals has).

The graph trajectory strict match and judge exist only in agentevals; the message
trajectory judge is the same in both. The tool-call match, whose field-path rule
differs, is made in :mod:`lg_eval.compat.agentevals` and
:mod:`lg_eval.compat.openevals` from :data:`MATCH_DOC`.
"""

from __future__ import annotations

from lg_eval.compat._shape import async_peer_evaluator, bare, judged, peer_evaluator, peer_factories
from lg_eval.evaluators import graph_trajectory_strict_match as own_graph_strict_match
from lg_eval.judges import create_graph_trajectory_llm_as_judge as own_graph_judge
from lg_eval.judges import create_trajectory_llm_as_judge as own_trajectory_judge

MATCH_DOC = """An evaluator comparing an agent's message trajectory with a reference one.

{peer} ``{{name}}``: the same options (``trajectory_match_mode``,
``tool_args_match_mode``, ``tool_args_match_overrides``) and the result
``{{{{"key": "trajectory_<mode>_match", "score": bool, "comment": None, "metadata": None}}}}``.
A field path of an override that a call lacks {rule}. lg_eval's own
:func:`lg_eval.evaluators.create_trajectory_match_evaluator`{own} gives the same
score with a comment and metadata saying what differed.
"""
"""The match evaluators' docstring; ``peer``, ``rule`` and ``own`` (its options) to fill."""

_STRICT_DOC = """Whether the run visited exactly the reference's nodes, turn by turn, in order.

agentevals' ``graph_trajectory_strict_match``: ``{"key": "graph_trajectory_strict_match",
"score": bool, "comment": None, "metadata": None}``. lg_eval's own
:data:`lg_eval.evaluators.graph_trajectory_strict_match` gives the same score with a
comment and metadata saying which turn differed.
"""

graph_trajectory_strict_match = peer_evaluator(own_graph_strict_match, shape=bare, doc=_STRICT_DOC)
graph_trajectory_strict_match_async = async_peer_evaluator(
    own_graph_strict_match,
    shape=bare,
    name="graph_trajectory_strict_match_async",
    doc=f"{_STRICT_DOC}\nThe evaluator is awaited when called.\n",
)

_JUDGE_DOC = """{what}: {peers} ``{{name}}``.

Takes :func:`lg_eval.judges.{own}`'s options (the peers' ``prompt``, ``model``,
``judge``, ``system``, ``continuous``, ``choices``, ``use_reasoning``,
``few_shot_examples``, ``feedback_key`` among them) and returns the peers' dict,
``{{{{"key", "score", "comment": the model's reasoning, "metadata": None}}}}``, or the
model's answer itself with a custom ``output_schema``. A judge that gets no verdict
raises :class:`~lg_eval.errors.JudgeError` (lg_eval's own judge gives ``score=None``
with the reason).
"""

create_trajectory_llm_as_judge, create_async_trajectory_llm_as_judge = peer_factories(
    own_trajectory_judge,
    judged,
    name="create_trajectory_llm_as_judge",
    doc=_JUDGE_DOC.format(
        what="An LLM judge of an agent's message trajectory",
        peers="agentevals' and openevals'",
        own="create_trajectory_llm_as_judge",
    ),
)
create_graph_trajectory_llm_as_judge, create_async_graph_trajectory_llm_as_judge = peer_factories(
    own_graph_judge,
    judged,
    name="create_graph_trajectory_llm_as_judge",
    doc=_JUDGE_DOC.format(
        what="An LLM judge of a LangGraph thread's route",
        peers="agentevals'",
        own="create_graph_trajectory_llm_as_judge",
    ),
)
