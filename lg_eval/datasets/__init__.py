"""Datasets: scripted cases to play on a graph, and what each run should look like.

A dataset file (YAML or JSONL) names a default target graph and default
evaluators, and lists cases; each case is a script of turns (an input, a
resume, answers by node, a computed answer, a continue, a state edit) played
on one fresh thread, and its expectations (trajectory, tool calls, output,
step budget). :func:`load_dataset` reads a file with errors naming file, line,
case and field; :func:`dump_dataset` writes one back; :func:`case_from_thread`
turns an extracted production thread into a case. A case may instead (or after its
scripted turns) give a simulated user (:class:`UserSimulation`): a persona and goal, the
model writing its turns, when the conversation stops, and who answers the graph's questions.
"""

from lg_eval.datasets._dataset import Dataset
from lg_eval.datasets._from_thread import case_from_thread
from lg_eval.datasets._io import (
    dataset_from_dict,
    dataset_hash,
    dump_dataset,
    field_path,
    load_dataset,
)
from lg_eval.datasets._models import (
    MODEL_PROVIDERS,
    Case,
    EvaluatorRef,
    Expected,
    InterruptRoute,
    OutputExpectation,
    OutputMatch,
    ToolCallExpectation,
    UserSimulation,
    UserStop,
)
from lg_eval.datasets._turns import (
    REVIEWER,
    TURN_KEYS,
    ContinueTurn,
    InputTurn,
    ResumeByNodeTurn,
    ResumeFnTurn,
    ResumeTurn,
    ScriptTurn,
    StateUpdate,
    TurnKind,
    UpdateTurn,
)

__all__ = [
    "MODEL_PROVIDERS",
    "REVIEWER",
    "TURN_KEYS",
    "Case",
    "ContinueTurn",
    "Dataset",
    "EvaluatorRef",
    "Expected",
    "InputTurn",
    "InterruptRoute",
    "OutputExpectation",
    "OutputMatch",
    "ResumeByNodeTurn",
    "ResumeFnTurn",
    "ResumeTurn",
    "ScriptTurn",
    "StateUpdate",
    "ToolCallExpectation",
    "TurnKind",
    "UpdateTurn",
    "UserSimulation",
    "UserStop",
    "case_from_thread",
    "dataset_from_dict",
    "dataset_hash",
    "dump_dataset",
    "field_path",
    "load_dataset",
]
